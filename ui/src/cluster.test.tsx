import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer } from "./test/fakeHealer";
import { renderApp } from "./test/renderApp";

test("Settings → More computers: a cluster that does not answer says why, one that does is connected and shows its computers, and leaving it asks first", async () => {
  const healer = new FakeHealer().install();
  healer.cluster.answers = false;
  const { user } = renderApp("#/settings/computers");
  const settings = await screen.findByTestId("cluster-settings");
  await user.type(await within(settings).findByTestId("cluster-address"), "127.0.0.1:7233");

  await user.click(within(settings).getByTestId("cluster-test"));
  expect(await within(settings).findByRole("alert")).toHaveTextContent(
    "The cluster didn't answer. The cluster at 127.0.0.1:7233 could not be reached: Connection refused.",
  );
  await user.click(within(settings).getByTestId("cluster-connect"));
  expect(await within(settings).findByText(/Not connected\./)).toBeInTheDocument();
  expect(healer.cluster.settings).toBeNull();

  healer.cluster.answers = true;
  healer.cluster.workers.set("healer", ["office-mac", "rack-2"]);
  await user.click(within(settings).getByTestId("cluster-test"));
  expect(await within(settings).findByTestId("cluster-test-result")).toHaveTextContent(
    "The cluster answers. 2 computers ready to take work: office-mac, rack-2.",
  );
  await user.click(within(settings).getByTestId("cluster-connect"));
  const connected = await within(settings).findByTestId("cluster-reachable");
  expect(connected).toHaveTextContent("Connected to 127.0.0.1:7233. 0 workflows run there.");
  const workers = within(settings).getAllByTestId("cluster-worker");
  expect(workers.map((w) => w.textContent)).toEqual([
    expect.stringMatching(/^office-mac.*asked for work/),
    expect.stringMatching(/^rack-2.*asked for work/),
  ]);
  expect(healer.cluster.settings?.queue).toBe("healer");

  // How to start a worker is told right here, with the line to type there.
  await user.click(within(settings).getByText("How to start a worker on another computer"));
  expect(within(settings).getByTestId("worker-command")).toHaveTextContent(
    "healer worker --temporal 127.0.0.1:7233 --queue healer --key-file ~/healer-cluster.key",
  );
  // The key goes where the person chooses in the save dialog, and the window keeps saying where.
  await user.click(within(settings).getByTestId("cluster-export-key"));
  expect(await within(settings).findByTestId("cluster-key-saved")).toHaveTextContent(
    "The key is saved as /home/you/Documents/healer-cluster.key.",
  );
  // Closing the dialog saves nothing.
  healer.cluster.keySaveAs = null;
  await user.click(within(settings).getByTestId("cluster-export-key"));
  expect(healer.cluster.keyExports).toBe(1);

  await user.click(within(settings).getByTestId("cluster-disconnect"));
  const dialog = await screen.findByRole("alertdialog");
  expect(dialog).toHaveTextContent("Every workflow comes back to this computer");
  await user.click(within(dialog).getByTestId("confirm-disconnect"));
  expect(await within(settings).findByTestId("cluster-form")).toBeInTheDocument();
  expect(healer.cluster.settings).toBeNull();
});

test("a workflow's page offers the cluster only once one is connected", async () => {
  const healer = new FakeHealer().install();
  const w = healer.addWorkflow({ title: "Nightly export", schedule: { kind: "manual" }, timeout_secs: 60 });
  renderApp(`#/workflows/${w.workflow.id}`);
  const place = await screen.findByTestId("runs-on");
  await waitFor(() => expect(place).toHaveTextContent("This computer · run on more computers…"));
  expect(screen.getByRole("link", { name: "run on more computers…" })).toHaveAttribute("href", "#/settings/computers");
});

test("a workflow is moved to the cluster from its page, its run there can be stopped, and each attempt says which computer ran it", async () => {
  const healer = new FakeHealer().install();
  const w = healer.addWorkflow({ title: "Nightly export", schedule: { kind: "manual" }, timeout_secs: 60 });
  healer.cluster.settings = { address: "temporal.lan:7233", namespace: "default", queue: "healer", tls: false, api_key_env: null };
  healer.addRun(w.workflow.id, { status: "succeeded" }, [
    { status: "failed", note: "The worker running it was lost; it ran again on another worker" },
    { status: "succeeded", worker: "rack-2", stdout: "exported" },
  ]);
  const running = healer.addRun(w.workflow.id, { status: "running", finished_at: null }, []);
  healer.cluster.workers.set("healer", ["rack-2"]);
  const { user } = renderApp(`#/workflows/${w.workflow.id}`);
  const picker = await screen.findByRole("radiogroup", { name: "Where it runs" });
  expect(within(picker).getByRole("radio", { name: "This computer" })).toBeChecked();
  await user.click(within(picker).getByRole("radio", { name: "Other computers (healer)" }));
  await waitFor(() => expect(healer.cluster.placement.get(w.workflow.id)).toBe("healer"));
  // The move is said, not only a radio dot that changed.
  expect(await screen.findByText("It runs on other computers now: its next run goes to the work sent to “healer”.")).toBeInTheDocument();
  await waitFor(() => expect(within(picker).getByRole("radio", { name: "Other computers (healer)" })).toBeChecked());

  // The open run is on another computer: no live output, and Stop.
  const waiting = await screen.findByTestId("cluster-waiting");
  expect(waiting).toHaveTextContent("Running on another computer. What it prints is shown here when it ends.");
  await user.click(within(waiting).getByTestId("stop-run"));
  await waitFor(() => expect(healer.cluster.stopped).toEqual([running.run.id]));

  // The earlier run: the lost attempt, then the one that ran on rack-2.
  const rows = screen.getAllByTestId("run-row");
  await user.click(within(rows[rows.length - 1]).getByRole("button", { expanded: false }));
  const attempts = await screen.findAllByTestId("attempt");
  expect(attempts[0]).toHaveTextContent("The worker running it was lost; it ran again on another worker");
  expect(within(attempts[1]).getByTestId("attempt-worker")).toHaveTextContent("on rack-2");
  // Its whole output stayed on that computer: nothing to download here.
  expect(within(attempts[1]).queryByTestId("download-stdout")).toBeNull();
});

test("with no keyring the cluster is tested first, the key's place is asked right there, and the typed address survives another tab", async () => {
  const healer = new FakeHealer().install();
  healer.secrets.keyringService = false;
  const { user } = renderApp("#/settings/computers");
  let settings = await screen.findByTestId("cluster-settings");
  await user.type(await within(settings).findByTestId("cluster-address"), "10.0.0.5:7233");

  // Another Settings tab and back: what was typed is still there.
  window.location.hash = "#/settings/models";
  await screen.findByTestId("settings-models");
  window.location.hash = "#/settings/computers";
  settings = await screen.findByTestId("cluster-settings");
  expect(await within(settings).findByTestId("cluster-address")).toHaveValue("10.0.0.5:7233");

  await user.click(within(settings).getByTestId("cluster-test"));
  expect(await within(settings).findByTestId("cluster-test-result")).toHaveTextContent("The cluster answers.");
  await user.click(within(settings).getByTestId("cluster-connect"));
  expect(await within(settings).findByTestId("cluster-key-needs-place")).toHaveTextContent(
    "The cluster answers. Healer makes a key that seals what it sends there, and needs a place to keep it.",
  );
  expect(within(settings).queryByText(/Settings → Models/)).not.toBeInTheDocument();
  expect(healer.cluster.settings).toBeNull();

  await user.click(within(settings).getByRole("button", { name: "Keep it in Healer's own file" }));
  expect(await within(settings).findByTestId("cluster-reachable")).toHaveTextContent("Connected to 10.0.0.5:7233.");
  expect(healer.secrets.fileChosen).toBe(true);
});

test("a run sent to the cluster while no computer takes its work says it waits, and how to start one", async () => {
  const healer = new FakeHealer().install();
  const w = healer.addWorkflow({ title: "Nightly export", schedule: { kind: "manual" }, timeout_secs: 60 });
  healer.cluster.settings = { address: "temporal.lan:7233", namespace: "default", queue: "healer", tls: false, api_key_env: null };
  healer.cluster.placement.set(w.workflow.id, "healer");
  healer.addRun(w.workflow.id, { status: "running", finished_at: null }, []);
  renderApp(`#/workflows/${w.workflow.id}`);
  const waiting = await screen.findByTestId("cluster-waiting");
  await waitFor(() => expect(waiting).toHaveAttribute("data-state", "no-worker"));
  expect(waiting).toHaveTextContent("Waiting: no computer is taking the cluster's work yet, so nothing has started this run.");
  expect(within(waiting).getByRole("link", { name: "More computers" })).toHaveAttribute("href", "#/settings/computers");
  expect(waiting).not.toHaveTextContent("Running on another computer");
});

test("a worker that stopped asking for work is shown as stopped, not as taking work", async () => {
  const healer = new FakeHealer().install();
  healer.cluster.settings = { address: "temporal.lan:7233", namespace: "default", queue: "healer", tls: false, api_key_env: null };
  healer.cluster.workers.set("healer", ["office-mac", "rack-2"]);
  healer.cluster.silentFor.set("rack-2", 5 * 60_000);
  renderApp("#/settings/computers");
  const workers = await screen.findAllByTestId("cluster-worker");
  expect(workers.map((w) => w.getAttribute("data-state"))).toEqual(["taking-work", "stopped"]);
  expect(workers[1]).toHaveTextContent("stopped: it last asked for work 5 min ago");
  expect(workers[0]).toHaveTextContent("asked for work just now");
});

test("agents on workers: the address workers reach the model on is saved, a worker gets a token shown once, and it can be taken back", async () => {
  const healer = new FakeHealer().install();
  healer.cluster.settings = { address: "127.0.0.1:7233", namespace: "default", queue: "healer", tls: false, api_key_env: null };
  const { user } = renderApp("#/settings/computers");
  const card = await screen.findByTestId("worker-gateway");
  expect(card).toHaveTextContent("never gets a model key");
  await user.type(within(card).getByTestId("worker-gateway-listen"), "everywhere");
  await user.click(within(card).getByTestId("worker-gateway-save"));
  expect(await within(card).findByRole("alert")).toHaveTextContent("is not an address to listen on");
  await user.clear(within(card).getByTestId("worker-gateway-listen"));
  await user.type(within(card).getByTestId("worker-gateway-listen"), "0.0.0.0:7480");
  await user.click(within(card).getByTestId("worker-gateway-save"));
  await waitFor(() => expect(healer.cluster.gateway.listen).toBe("0.0.0.0:7480"));

  await user.type(within(card).getByTestId("worker-token-name"), "rack-2");
  await user.click(within(card).getByTestId("worker-token-make"));
  expect(await within(card).findByTestId("worker-token")).toHaveTextContent(/^healer-worker-/);
  expect(within(card).getByTestId("worker-token-made")).toHaveTextContent("can't show it again");
  const listed = await within(card).findByTestId("gateway-worker");
  expect(listed).toHaveTextContent("rack-2");
  await user.click(within(listed).getByTestId("gateway-worker-forget"));
  await waitFor(() => expect(within(card).queryByTestId("gateway-worker")).toBeNull());
  expect(healer.cluster.gateway.workers).toEqual([]);
});
