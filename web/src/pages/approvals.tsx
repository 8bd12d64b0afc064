// The inbox: every pending approval and question, oldest first.
import { type Wait } from '../api';
import { WaitCard } from '../components/wait';
import { useLive } from '../live';

export function Approvals() {
  const waits = useLive<Wait[]>('/waits?status=pending', (e) => e.kind.startsWith('wait.'));
  return (
    <section>
      <h1>Approvals</h1>
      {waits.error && <p class="error">{waits.error}</p>}
      {waits.data && waits.data.length === 0 && <p class="empty">Nothing is waiting for you.</p>}
      {waits.data?.map((w) => <WaitCard key={w.id} wait={w} />)}
    </section>
  );
}
