import { describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiReports } from './api-report.js';
import { repoRoot } from './package.util.js';

const folder = join(repoRoot, 'api-report');

describe('the API report', () => {
  const reports = apiReports();
  if (process.env.UPDATE_API_REPORT) {
    mkdirSync(folder, { recursive: true });
    for (const [name, content] of reports) writeFileSync(join(folder, name), content);
  }

  it.each([...reports.keys()])('%s lists the public surface of its entry as committed', (name) => {
    const committed = join(folder, name);
    expect(existsSync(committed) ? readFileSync(committed, 'utf8') : '(missing)').toBe(reports.get(name));
  });
});
