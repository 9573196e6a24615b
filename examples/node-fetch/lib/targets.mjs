// Targets (docs/raw-format.md, "Targets"): --targets FILE lists the requests every worker cycles through, one per
// line, `METHOD URL` or `METHOD URL @/absolute/body/path`; worker w's request k goes to target (w + k) mod T.
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { MAX_BODY_SIZE, UsageError, urlProblem } from './options.mjs';

/** Worker w's request k (warm-up and timed requests each counted from 0). */
export const pick = (targets, w, k) => targets[(w + k) % targets.length];

/** The targets of the file, {method, url, body (a Buffer or null), size, check: false}: a target's answer is not
 * compared. Each body file is read once, however many lines name it. A file that cannot be read or a line that
 * is not a target is a UsageError naming the line. */
export function readTargets(path) {
  let text;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--targets ${path}: cannot read it (${err.message})`);
  }
  const bodies = new Map();
  const targets = [];
  text.split('\n').forEach((line, i) => {
    const fields = line.split(/\s+/).filter((f) => f !== '');
    if (fields.length === 0 || fields[0].startsWith('#')) return;
    const bad = (why) => new UsageError(`--targets ${path}, line ${i + 1}: ${why}`);
    if (fields.length < 2 || fields.length > 3 || (fields.length === 3 && !fields[2].startsWith('@'))) {
      throw bad("not a target: 'METHOD URL' or 'METHOD URL @/absolute/body/path'");
    }
    const [method, url] = fields;
    if (!['GET', 'POST', 'PUT'].includes(method)) throw bad(`the method must be GET, POST or PUT, got '${method}'`);
    const why = urlProblem(url);
    if (why !== null) throw bad(`the URL ${why}`);
    const target = { method, url, body: null, size: 0, check: false };
    if (fields.length === 3) {
      const file = fields[2].slice(1);
      if (method === 'GET') throw bad('a GET sends no body');
      if (!isAbsolute(file)) throw bad(`the body file must be an absolute path, got '${file}'`);
      if (!bodies.has(file)) {
        try {
          if (statSync(file).size > MAX_BODY_SIZE) throw bad(`the body file ${file} is above 1 GiB`);
          bodies.set(file, readFileSync(file));
        } catch (err) {
          throw err instanceof UsageError ? err : bad(`cannot read the body file ${file} (${err.message})`);
        }
      }
      target.body = bodies.get(file);
      target.size = target.body.length;
    }
    targets.push(target);
  });
  if (targets.length === 0) throw new UsageError(`--targets ${path}: no targets in it (one 'METHOD URL [@BODYFILE]' per line)`);
  return targets;
}
