// A local nx plugin: gives every publishable package (a package.json under libs/ or tools/ that
// is not "private") the `nx-release-publish` target that `nx release` runs in its publish step.
// @nx/js would add it, with a heavy install; this target runs `npm publish` through
// tools/scripts/release/publish.mjs instead. New packages get it without any edit here.
'use strict';
const { readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');

const createNodes = [
  '{libs,tools}/*/package.json',
  (files, _options, context) =>
    files.flatMap((file) => {
      const manifest = JSON.parse(readFileSync(join(context.workspaceRoot, file), 'utf-8'));
      if (manifest.private === true) return [];
      const root = dirname(file);
      return [
        [
          file,
          {
            projects: {
              [root]: {
                targets: {
                  'nx-release-publish': {
                    // Built first, in dependency order (npm publish then skips prepack: two
                    // prepacks at once would delete a dist/ that the other's build reads), and
                    // published after the packages it depends on.
                    dependsOn: ['build', '^nx-release-publish'],
                    executor: 'nx:run-commands',
                    options: {
                      command: `node tools/scripts/release/publish.mjs ${root}`,
                      cwd: '{workspaceRoot}',
                    },
                    cache: false,
                  },
                },
              },
            },
          },
        ],
      ];
    }),
];

module.exports = { name: 'svcboot-release', createNodes, createNodesV2: createNodes };
