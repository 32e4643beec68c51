/** `GET /api/v1/openapi.json`: the API's OpenAPI document (generated from the zod schemas). */
import { Hono } from 'hono';
import { openApiDocument } from './openapi';

export function docsRoutes(): Hono {
  const app = new Hono();
  app.get('/api/v1/openapi.json', (c) => c.json(openApiDocument()));
  return app;
}
