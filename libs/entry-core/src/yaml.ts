// YAML for svcboot's other packages (as `@svcboot/entry-core/internal/yaml`): boot.yaml's reader,
// the common subset read without the `yaml` library, which loads only for a text outside it
// (config/yaml-library.ts), so a start that reads an OpenAPI mapping file too loads one parser.
export { parseYaml as parse } from './config/yaml-library.js';
