// The checked-in TypeScript in proto/gen must be exactly what protoc + ts-proto produce from proto/*.proto.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const protoDir = path.resolve('proto');

function listFiles(root: string, dir = root): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    return statSync(full).isDirectory() ? listFiles(root, full) : [path.relative(root, full)];
  });
}

describe('generated proto code', () => {
  it('is current with the .proto sources (run `make proto` after editing them)', function () {
    this.timeout(60000);
    const out = mkdtempSync(path.join(os.tmpdir(), 'chorus-proto-'));
    try {
      execFileSync('bash', [path.join(protoDir, 'generate.sh'), out], { stdio: 'pipe' });
      const fresh = listFiles(out).sort();
      const checkedIn = listFiles(path.join(protoDir, 'gen')).sort();
      expect(checkedIn, 'generated file list').to.deep.equal(fresh);
      for (const file of fresh) {
        const expected = readFileSync(path.join(out, file), 'utf8');
        const actual = readFileSync(path.join(protoDir, 'gen', file), 'utf8');
        expect(actual, `proto/gen/${file} is stale`).to.equal(expected);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
