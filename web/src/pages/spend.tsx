// Spend: today against the daily cap, the last 7 UTC days, by model. The
// numbers are the API's, never estimated here.
import { type Spend } from '../api';
import { useLive } from '../live';
import { clean, usd } from '../text';
import { Bar } from './home';

export function SpendPage() {
  const sp = useLive<Spend>('/spend', (e) => e.kind === 'run.usage' || e.kind === 'run.completed');
  const d = sp.data;
  const max = Math.max(0.000001, ...(d?.days ?? []).map((x) => x.usd));
  return (
    <section>
      <h1>Spend</h1>
      {sp.error && <p class="error">{sp.error}</p>}
      {d && (
        <>
          <div class="card">
            <div class="meta">Today ({d.today}, UTC)</div>
            <span class="stat" data-testid="spend-today">{usd(d.todayUsd)}</span>
            <span class="meta"> {d.capUsd > 0 ? `of ${usd(d.capUsd)} daily cap` : 'no daily cap set (Settings)'}</span>
            {d.capUsd > 0 && <Bar frac={d.todayUsd / d.capUsd} label="Today's spend against the daily cap" />}
            {d.capReached && <p class="error">The daily cap is reached: new missions are refused until tomorrow (UTC).</p>}
          </div>
          <h2>Last 7 days</h2>
          <table class="table" data-testid="spend-days">
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                <th scope="col">Spend</th>
                <th scope="col"><span class="sr-only">Share</span></th>
              </tr>
            </thead>
            <tbody>
              {(d.days ?? []).map((x) => (
                <tr>
                  <td>{x.day}</td>
                  <td class="num">{usd(x.usd)}</td>
                  <td class="wide"><Bar frac={x.usd / max} label={`Spend on ${x.day}`} /></td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>By model</h2>
          {(d.byModel ?? []).length === 0 ? (
            <p class="empty">No model calls in these 7 days.</p>
          ) : (
            <table class="table" data-testid="spend-models">
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <th scope="col">Calls</th>
                  <th scope="col">Spend</th>
                </tr>
              </thead>
              <tbody>
                {(d.byModel ?? []).map((m) => (
                  <tr>
                    <td class="mono">{clean(m.model)}</td>
                    <td class="num">{m.calls}</td>
                    <td class="num">{usd(m.usd)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
