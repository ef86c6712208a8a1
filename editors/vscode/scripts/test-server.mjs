// `npm run test:server`: the protocol smoke test against a real livenote binary, by default the
// repository's debug build. Fails (rather than skips) when the binary is missing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const exe = process.platform === 'win32' ? 'livenote.exe' : 'livenote';
const bin = resolve(process.env.LIVENOTE_BIN || join(root, '..', '..', 'target', 'debug', exe));
if (!existsSync(bin)) {
  console.error(`test:server: no livenote binary at ${bin}.`);
  console.error('Build it with "cargo build -p livenote --bin livenote" at the repository root, or set LIVENOTE_BIN.');
  process.exit(1);
}
console.log(`test:server: LIVENOTE_BIN=${bin}`);
const tests = ['server.test.js', 'extension.test.js'].map((f) => join(root, 'out', 'test', f));
const result = spawnSync(process.execPath, ['--test', ...tests], {
  stdio: 'inherit',
  env: { ...process.env, LIVENOTE_BIN: bin },
});
process.exit(result.status ?? 1);
