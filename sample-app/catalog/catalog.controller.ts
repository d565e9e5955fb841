import { Controller, Get, Param } from '@nestjs/common';
import { CatalogService, type CatalogAnswer } from './catalog.service.js';

@Controller('catalog')
export class CatalogController {
  constructor(private readonly catalog: CatalogService) {}

  /** Hedged: served by the primary, or by the replica when the primary is slow or failing (`servedBy`). */
  @Get(':id')
  item(@Param('id') id: string): Promise<CatalogAnswer> {
    return this.catalog.item(id);
  }
}
