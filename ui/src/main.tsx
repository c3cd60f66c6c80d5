import { QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { createQueryClient } from "./queryClient";
import { openWhereLeft } from "./viewMemory";
import "./styles/base.css";
import "./styles/frame.css";
import "./styles/components.css";
import "./styles/lists.css";
import "./styles/pages.css";
import "./styles/settings.css";
import "./styles/workflows.css";
import "./styles/form.css";
import "./styles/models.css";
import "./styles/autofix.css";
import "./styles/thread.css";
import "./styles/chat.css";
import "./styles/checkpoints.css";
import "./styles/memory.css";
import "./styles/diff.css";
import "./styles/safety.css";
import "./styles/people.css";
import "./styles/projects.css";

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");

// A window made again after a close opens on the screen the last one showed.
void openWhereLeft().finally(() => {
  createRoot(root).render(
    <StrictMode>
      <QueryClientProvider client={createQueryClient()}>
        <App />
      </QueryClientProvider>
    </StrictMode>,
  );
});
