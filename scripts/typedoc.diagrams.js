// The documentation site's custom script (`customJs` in typedoc.config.js): draws the Mermaid diagrams
// of a page — the `<pre class="mermaid">` the build makes of each ```mermaid fence — with the copy of
// Mermaid in the site's assets, loaded only on pages that have one. The page is shown first (TypeDoc
// hides the body until its own script has run, and Mermaid cannot measure text in a hidden page).
(() => {
  const diagrams = [...document.querySelectorAll('pre.mermaid')];
  if (diagrams.length === 0) return;
  const bundle = new URL('mermaid.min.js', document.currentScript.src).href;
  const dark = () => {
    const theme = document.documentElement.dataset.theme;
    return theme === 'dark' || (theme !== 'light' && matchMedia('(prefers-color-scheme: dark)').matches);
  };
  const whenShown = (then) =>
    document.body.style.display === 'none' ? requestAnimationFrame(() => whenShown(then)) : then();
  const script = document.createElement('script');
  script.src = bundle;
  script.onload = () =>
    whenShown(() => {
      window.mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', theme: dark() ? 'dark' : 'default' });
      window.mermaid.run({ nodes: diagrams }).catch((error) => console.error('Mermaid:', error));
    });
  document.head.append(script);
})();
