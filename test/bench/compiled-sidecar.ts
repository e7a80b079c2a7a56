// Compiles the sidecar to JavaScript in a temp dir, so benchmarks measure what `npm run build` ships, not tsx.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface CompiledSidecar {
  /** Absolute path of the compiled `sidecar/main.js`. */
  readonly main: string;
  /** Removes the build directory. */
  remove(): void;
}

/**
 * Runs `tsc -p tsconfig.build.json` into a fresh temp dir (never the shared `dist/`), with the repo's
 * node_modules linked and package.json copied so the ES modules resolve as they do from `dist/`.
 */
export async function compileSidecar(): Promise<CompiledSidecar> {
  const outDir = mkdtempSync(path.join(os.tmpdir(), 'chorus-bench-build-'));
  const tsc = path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc');
  const result = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile(
      process.execPath,
      [tsc, '-p', path.join(REPO_ROOT, 'tsconfig.build.json'), '--outDir', outDir],
      { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err === null ? 0 : 1, output: `${stdout}${stderr}` }),
    );
  });
  const main = path.join(outDir, 'sidecar/main.js');
  if (!existsSync(main)) {
    rmSync(outDir, { recursive: true, force: true });
    throw new Error(`tsc produced no sidecar/main.js:\n${result.output.slice(0, 3000)}`);
  }
  // tsc still emits on type errors (work in progress elsewhere in the tree); say so rather than fail the bench.
  if (result.code !== 0) console.error(`warning: tsc reported errors; benchmarking the emitted JavaScript anyway`);
  symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(outDir, 'node_modules'));
  copyFileSync(path.join(REPO_ROOT, 'package.json'), path.join(outDir, 'package.json'));
  return { main, remove: () => rmSync(outDir, { recursive: true, force: true }) };
}
