// The one-way dependency rule of src/ (ARCHITECTURE.md), checked by `npm run lint:deps`, which
// `npm test` runs before any test. Layers, bottom first; a folder may import its own layer and the
// ones below it, never one above:
//
//   native, protocol (wire vocabulary), common (logger, loop delay) < assignors < log < config
//     < coordinator (pure state machines) < cluster (the cluster view, topic front end)
//     < actors < metrics < net < server < cli, testing (the embeddable test broker),
//     bench (the load generators and workloads of `sluice bench`, which npm run bench shares)
//
// The client (src/client) is a library of its own: it imports only the wire vocabulary and the
// assignors it shares with the server-side group coordinator. src/index.ts is the package entry.
// Beyond the layers: no module cycles anywhere in src.

const LAYERS = [
  ['native'],
  ['protocol', 'common'],
  ['assignors'],
  ['log'],
  ['config'],
  ['coordinator'],
  ['cluster'],
  ['actors'],
  ['metrics'],
  ['net'],
  ['server'],
  ['cli', 'testing', 'bench'],
];

/** The path pattern of a layer's folder (or, for config, its one file). */
const pathOf = (name) => (name === 'config' ? '^src/config\\.ts$' : `^src/${name}/`);

const layerRules = LAYERS.flatMap((layer, rank) => {
  const above = LAYERS.slice(rank + 1).flat();
  if (above.length === 0) return [];
  return layer.map((name) => ({
    name: `layer-${name}`,
    comment: `${name} sits below ${above.join(', ')} and may not import from them`,
    severity: 'error',
    from: { path: pathOf(name) },
    to: { path: above.map(pathOf).concat(['^src/client/', '^src/index\\.ts$']) },
  }));
});

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'protocol-imports-nothing-of-the-broker',
      comment: 'the wire vocabulary depends only on itself and the addon loader (CRC-32C)',
      severity: 'error',
      from: { path: '^src/protocol/' },
      to: { path: '^src/', pathNot: '^src/(protocol|native)/' },
    },
    {
      name: 'client-imports-only-protocol',
      comment: 'our Kafka client is a library: wire vocabulary and the shared assignors only',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: '^src/(client|protocol|native|assignors)/' },
    },
    {
      name: 'no-circular',
      comment: 'no module cycles at run time (a cycle made only of type imports costs nothing and is allowed)',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(dist|test|bench)/' },
  },
};
