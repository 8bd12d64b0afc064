// ErrorNote shows a failed request: its message and, for the agent, store
// and device errors of seed 000, its code and guidance (what to do next).
// Seed 000 asks consumers to show unknown codes and guidance rather than
// hide them. The server's text is shown as text, never as markup.
import { ApiError } from '../api';
import { clean } from '../text';

/** Failure is what a page keeps of a failed request. */
export type Failure = { message: string; code?: string; guidance?: string } | null;

/** failure turns a caught value into a Failure. */
export function failure(x: unknown): Failure {
  if (x instanceof ApiError) return { message: x.message, code: x.code, guidance: x.guidance };
  return { message: x instanceof Error ? x.message : String(x) };
}

/** ErrorNote renders f (nothing when null). */
export function ErrorNote({ f }: { f: Failure }) {
  if (!f) return null;
  // The seed's codes are upper case (PACKAGE_BROKEN); the API's own
  // lower-case codes (invalid_json) add nothing to their message.
  const code = f.code && /^[A-Z][A-Z0-9_]*$/.test(f.code) ? `${clean(f.code)}: ` : '';
  return (
    <div class="error" role="alert" data-testid="error">
      <p>
        {code}
        {clean(f.message)}
      </p>
      {f.guidance && <p data-testid="error-guidance">What to do: {clean(f.guidance)}</p>}
    </div>
  );
}
