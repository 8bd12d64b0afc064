// A pending wait: an approval (the exact tool call, its risk, the diff;
// approve / deny / approve and remember) or a question (options or a free
// answer). Everything in the payload came from the model: text only.
import { useState } from 'preact/hooks';
import { api, type Wait } from '../api';
import { clean } from '../text';

export function WaitCard({ wait, onDone, showMission = true }: { wait: Wait; onDone?: () => void; showMission?: boolean }) {
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState('');
  const [answer, setAnswer] = useState('');
  const p = wait.payload ?? {};

  async function resolve(body: Record<string, unknown>) {
    setBusy(true);
    setErr('');
    try {
      await api('POST', `/waits/${encodeURIComponent(wait.id)}/resolve`, body);
      onDone?.();
    } catch (x) {
      setErr((x as Error).message);
      setBusy(false);
    }
  }

  const mission = showMission && (
    <a class="meta" href={`/mission/?id=${encodeURIComponent(wait.missionId)}`}>
      Open the mission
    </a>
  );

  if (wait.kind === 'question') {
    const options: string[] = Array.isArray(p.options) ? p.options.map((o: unknown) => clean(o)) : [];
    return (
      <article class="card needs" data-testid="wait" aria-label="Question">
        <h3>Question</h3>
        <p class="text">{clean(p.text)}</p>
        {p.detail && <pre>{clean(p.detail)}</pre>}
        {options.length > 0 && (
          <div class="actions">
            {options.map((o) => (
              <button disabled={busy} onClick={() => resolve({ answer: o })}>
                {o}
              </button>
            ))}
          </div>
        )}
        <form
          class="composer"
          onSubmit={(e) => {
            e.preventDefault();
            if (answer.trim()) void resolve({ answer: answer.trim() });
          }}
        >
          <label class="sr-only" for={`answer-${wait.id}`}>Your answer</label>
          <input id={`answer-${wait.id}`} placeholder="Your answer" value={answer} onInput={(e) => setAnswer((e.target as HTMLInputElement).value)} />
          <button class="primary" type="submit" disabled={busy || !answer.trim()}>Answer</button>
        </form>
        {err && <p class="error" role="alert">{err}</p>}
        {mission}
      </article>
    );
  }
  return (
    <article class="card needs" data-testid="wait" aria-label="Approval">
      <div class="row">
        <h3>{clean(p.title) || `Run ${clean(p.tool)}?`}</h3>
        {p.risk && <span class="risk">{clean(p.risk)} risk</span>}
      </div>
      {p.reason && <p class="meta">{clean(p.reason)}</p>}
      {p.detail ? (
        <>
          <pre class="mono">{clean(p.detail)}</pre>
          <details>
            <summary>The exact tool call</summary>
            <pre class="mono">{`${clean(p.tool)} ${clean(p.input)}`}</pre>
          </details>
        </>
      ) : (
        <pre class="mono" aria-label="The exact tool call">{`${clean(p.tool)} ${clean(p.input)}`}</pre>
      )}
      {p.diff && (
        <details>
          <summary>Diff</summary>
          <Diff text={clean(p.diff)} />
        </details>
      )}
      <div class="actions">
        <button class="primary" disabled={busy} onClick={() => resolve({ approved: true })}>Approve</button>
        <button disabled={busy} onClick={() => resolve({ approved: true, remember: true })}>Approve and remember</button>
        <button class="danger" disabled={busy} onClick={() => resolve({ approved: false, reason: 'denied by the owner' })}>Deny</button>
      </div>
      {err && <p class="error" role="alert">{err}</p>}
      {mission}
    </article>
  );
}

/** Diff renders a unified diff as lines, colour-coded, still plain text. */
export function Diff({ text }: { text: string }) {
  return (
    <pre class="diff">
      {text.split('\n').map((l) => (
        <span class={l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : l.startsWith('@@') ? 'hunk' : undefined}>
          {l + '\n'}
        </span>
      ))}
    </pre>
  );
}
