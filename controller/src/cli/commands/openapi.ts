/**
 * `optimus openapi`: prints the HTTP API's OpenAPI 3.1 document (what `GET /api/v1/openapi.json`
 * serves), for client generators that work from a file; `docs/api/openapi.json` is its output.
 */
import type { Command } from 'commander';
import { openApiDocument } from '../../http/openapi';
import { printJson } from '../output';

export function registerOpenApiCommands(program: Command): void {
  program
    .command('openapi')
    .description("print the HTTP API's OpenAPI 3.1 document (as GET /api/v1/openapi.json serves it)")
    .option('--json', 'accepted for uniformity: the document is one JSON document on stdout either way')
    .action(() => printJson(openApiDocument()));
}
