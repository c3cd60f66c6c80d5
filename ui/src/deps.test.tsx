import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer } from "./test/fakeHealer";
import { typeAtEnd } from "./test/editor";
import { readyDialog } from "./test/readyDialog";
import { renderApp } from "./test/renderApp";

function pythonWorkflow(requirements: string[] = []) {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Config reader", runtime: { kind: "python3" }, code: "print('v1')\n" });
  kept.versions[0].requirements = requirements;
  return { healer, id: kept.workflow.id };
}

test("the Dependencies tab shows the packages, what is installed, the lock and the log; Reinstall installs again", async () => {
  const { healer, id } = pythonWorkflow(["tomli==2.2.1", "PyYAML"]);
  healer.deps.environments.set(id, {
    lock: ["tomli==2.2.1"], log: "$ pip install -r requirements.txt\nSuccessfully installed tomli-2.2.1\n", error: null,
    interpreter: "Python 3.11.7 (this workflow's own environment)", built_at: new Date().toISOString(),
  });
  const { user } = renderApp(`#/workflows/${id}/dependencies`);

  const card = await screen.findByTestId("dependencies");
  expect(card).toHaveAttribute("data-state", "outdated");
  expect(within(card).getByTestId("dependencies-state")).toHaveTextContent("Changes before the next run");
  const rows = within(card).getAllByTestId("package-row");
  expect(rows.map((r) => r.textContent)).toEqual(["tomli2.2.12.2.1", "PyYAMLany versionnot yet"]);
  expect(card).toHaveTextContent("Python 3.11.7 (this workflow's own environment)");
  expect(card).toHaveTextContent(`/workflows/${id}/.venv`);
  expect(within(card).getByTestId("dependencies-lock")).toHaveTextContent("Everything installed, with exact versions (1)");
  expect(within(card).getByTestId("dependencies-log")).toHaveTextContent("Successfully installed tomli-2.2.1");
  // No engine words: no JSON, no state ids.
  expect(card.textContent).not.toMatch(/outdated|not_installed|\{/);

  await user.click(within(card).getByTestId("reinstall"));
  await waitFor(() => expect(healer.callsTo("reinstall_dependencies")).toHaveLength(1));
  await waitFor(() => expect(screen.getByTestId("dependencies")).toHaveAttribute("data-state", "ready"));
  expect(await screen.findByTestId("toast")).toHaveTextContent("The packages were installed again.");
});

test("a failed installation shows the installer's own words and its log, open", async () => {
  const { healer, id } = pythonWorkflow(["healer-no-such-package"]);
  healer.deps.environments.set(id, {
    failed: true, lock: [], log: "$ pip install -r requirements.txt\nERROR: No matching distribution found for healer-no-such-package\n",
    error: "ERROR: No matching distribution found for healer-no-such-package", interpreter: "Python 3.11.7", built_at: new Date().toISOString(),
  });
  renderApp(`#/workflows/${id}/dependencies`);
  const card = await screen.findByTestId("dependencies");
  expect(card).toHaveAttribute("data-state", "failed");
  expect(within(card).getByTestId("dependencies-error")).toHaveTextContent("pip said:ERROR: No matching distribution found");
  expect(within(card).getByTestId("dependencies-log")).toHaveAttribute("open");
  expect(within(card).getByTestId("reinstall")).toHaveTextContent("Reinstall");
});

test("a shell workflow's tab says it uses the machine, with nothing to install", async () => {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Backup", runtime: { kind: "bash" }, code: "echo ok\n" });
  renderApp(`#/workflows/${kept.workflow.id}/dependencies`);
  const card = await screen.findByTestId("dependencies");
  expect(card).toHaveTextContent("Shell workflows use the programs installed on this machine");
  expect(within(card).queryByTestId("reinstall")).not.toBeInTheDocument();
});

test("saving a script offers the packages its new imports need; the ticked ones come with the version", async () => {
  const { healer, id } = pythonWorkflow(["tomli==2.2.1"]);
  const { user } = renderApp(`#/workflows/${id}/script`);
  const editor = await waitFor(() => {
    const content = document.querySelector<HTMLElement>(".code-editor .cm-content");
    if (!content) throw new Error("no editor yet");
    return content;
  });
  typeAtEnd(editor, "import yaml\nfrom bs4 import BeautifulSoup\n");

  const offers = await screen.findByTestId("package-offers", {}, { timeout: 3000 });
  expect(offers).toHaveTextContent("This script imports packages the workflow doesn't have yet");
  expect(offers).toHaveTextContent("Ticked ones come with version 2.0");
  const boxes = within(offers).getAllByTestId("package-offer");
  expect(boxes.map((b) => b.getAttribute("data-package"))).toEqual(["PyYAML", "beautifulsoup4"]);
  expect(offers).toHaveTextContent("PyYAMLfor yaml (line 2) — the package that provides yaml");
  // The person leaves one out.
  await user.click(boxes[1]);
  expect(boxes[1]).not.toBeChecked();

  await user.click(screen.getByTestId("save-script"));
  await waitFor(() => expect(healer.callsTo("save_script")).toHaveLength(1));
  expect(healer.callsTo("save_script")[0].args.requirements).toEqual(["tomli==2.2.1", "PyYAML"]);
});

test("the Versions tab shows which packages a version added, removed or changed", async () => {
  const { healer, id } = pythonWorkflow(["six==1.16.0", "requests"]);
  healer.addVersion(id, "print('v1')\n", "installed tomli 2.2.1", { major: 1, minor: 1 }, { kind: "healer" }, undefined, undefined, [
    "six==1.17.0",
    "tomli==2.2.1",
  ]);
  renderApp(`#/workflows/${id}/versions`);
  const changes = await screen.findByTestId("package-changes");
  // In the order of the newer list; removals last.
  expect(changes.textContent).toBe("PackagesChanged six 1.16.0 → 1.17.0Added tomli 2.2.1Removed requests any version");
  // Same code: the diff says so instead of showing two identical scripts.
  expect(screen.getByTestId("version-diff")).toHaveTextContent("The script is the same in both; only its packages changed.");
});

test("Try another package name… asks for the name, and Enter installs it", async () => {
  const { healer, id } = pythonWorkflow();
  const checkpoint = healer.checkpoints.add({
    trigger: "environment", workflow_id: id, title: "A package could not be installed", recommend: 2,
    context:
      "“Config reader” cannot import dateutil (run 4).\n\nHealer tried to install the package python-dateutil-x, and pip said:\nERROR: No matching distribution found\n\nWhat this workflow's environment has:\nInterpreter: Python 3.11.7\nIts packages: none installed yet\nThe failing import (line 1): import dateutil",
    options: [
      { label: "Try another package name…", description: "Name the pip package that provides dateutil", action: { kind: "install_package" }, recommended: false },
      { label: "Pause", description: "Stop running it until you resume it", action: { kind: "pause" }, recommended: false },
    ],
  });
  const { user } = renderApp("#/workflows");
  const dialog = await readyDialog(checkpoint.id);
  // The short report shows as a report.
  expect(within(dialog).getByTestId("checkpoint-report")).toHaveTextContent("The failing import (line 1): import dateutil");

  const tryAnother = within(dialog).getAllByTestId("checkpoint-option")[0];
  await user.click(tryAnother);
  // Nothing is decided without a name: the name field takes the cursor.
  expect(healer.callsTo("decide_checkpoint")).toHaveLength(0);
  const name = within(dialog).getByTestId("checkpoint-package");
  await waitFor(() => expect(name).toHaveFocus());
  expect(dialog).toHaveTextContent("Write the name of the package to install, then press Enter.");

  await user.type(name, "python-dateutil{Enter}");
  await waitFor(() => expect(healer.callsTo("decide_checkpoint")).toHaveLength(1));
  expect(healer.callsTo("decide_checkpoint")[0].args).toEqual({ id: checkpoint.id, option: 1, notes: "python-dateutil" });
  await waitFor(() => expect(screen.queryByTestId("checkpoint-dialog")).not.toBeInTheDocument());
  await waitFor(() =>
    expect(screen.getAllByTestId("toast").map((t) => t.textContent)).toContain(
      "Healer installed python-dateutil 1.0.0 as version 1.1; it runs again now",
    ),
  );
});
