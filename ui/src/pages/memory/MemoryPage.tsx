import { PageHeader } from "../../components/PageHeader";
import { PatternDetailView } from "./PatternDetail";
import { PatternList } from "./PatternList";

/** Memory: the errors Healer has seen and the repairs it tried; with a signature, one of them. */
export function MemoryPage({ signature }: { signature: string | null }) {
  if (signature !== null) {
    return (
      <section className="page memory-page" data-testid="page-memory">
        <PatternDetailView signature={signature} />
      </section>
    );
  }
  return (
    <section className="page memory-page" data-testid="page-memory">
      <PageHeader
        title="Memory"
        description="The errors Healer has seen, most recent first, and the repairs it tried for each."
      />
      <PatternList />
    </section>
  );
}
