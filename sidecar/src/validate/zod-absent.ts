/**
 * Stands in for `zod` inside the sidecar bundle (see `build.mjs`). The shared modules the sidecar
 * imports build zod schemas when loaded; this absorbs those calls. Validation itself goes through the
 * embedded JSON Schemas, so parsing with a stand-in schema is a bug and fails loudly.
 */
const refuse = (): never => {
  throw new Error('zod is not bundled in the sidecar; validate with sidecar/src/validate/wire');
};

const handler: ProxyHandler<() => void> = {
  get: (_target, prop) =>
    prop === 'parse' || prop === 'safeParse' || prop === 'parseAsync' ? refuse : absent,
  apply: () => absent,
};
const absent: unknown = new Proxy(() => undefined, handler);

export const z = absent;
export default absent;
