// Types of ui-packages.mjs, for the tests that compare the served UI files with the pinned tarballs.
export interface UiPackage {
  pkg: string;
  version: string;
  integrity: string;
  /** The folder under assets/. */
  dir: string;
  /** (path inside the package, name under assets/<dir>/). */
  files: Array<[string, string]>;
}
export const UI_PACKAGES: UiPackage[];
/** The regular files of a tar archive, by path. */
export function untar(tar: Buffer): Map<string, Buffer>;
/** The UI's files (by path inside the package) from its pinned tarball, integrity checked. */
export function pinnedFiles(ui: UiPackage): Promise<Map<string, Buffer>>;
