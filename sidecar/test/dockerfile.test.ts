import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { NODE_FLAGS } from '../build.mjs';

const dockerfile = fs.readFileSync(path.resolve(import.meta.dirname, '../Dockerfile'), 'utf8');

it('runs the bundle with the measured Node flags, as a non-root user', () => {
  const cmd = /^CMD (\[.*\])$/m.exec(dockerfile)?.[1];
  expect(JSON.parse(cmd ?? '[]')).toEqual([...NODE_FLAGS, '/app/sidecar.cjs']);
  const user = /^USER (\S+)$/m.exec(dockerfile)?.[1] ?? '';
  expect(user).not.toMatch(/^(root|0)(:|$)/);
});
