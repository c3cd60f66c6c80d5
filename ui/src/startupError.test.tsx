import { screen } from "@testing-library/react";
import { expect, test } from "vitest";
import type { ErrorCode } from "./bindings";
import { FakeHealer } from "./test/fakeHealer";
import { renderApp } from "./test/renderApp";

test("the startup error screen explains an engine that is already running", async () => {
  const message = "Another Healer engine (pid 811) is using this data folder. Close it, then open Healer again.";
  new FakeHealer().fail("app_info", "engine_running", message).install();
  renderApp();

  const screenRoot = await screen.findByTestId("startup-error");
  expect(screenRoot).toHaveTextContent("Healer is already running");
  expect(screenRoot).toHaveTextContent(message);
  // Nothing of the normal app, which could not work without its engine.
  expect(screen.queryByTestId("nav-workflows")).not.toBeInTheDocument();
});

test.each<[ErrorCode, string]>([
  ["corrupt_database", "Healer's database can't be read"],
  ["schema_too_new", "This database is from a newer Healer"],
  ["data_dir", "Healer can't use its data folder"],
  ["internal", "Healer could not start"],
])("a startup failure with code %s is titled “%s”", async (code, title) => {
  new FakeHealer().fail("app_info", code, "What to do next.").install();
  renderApp();

  expect(await screen.findByRole("heading", { name: title })).toBeInTheDocument();
  expect(screen.getByTestId("startup-error")).toHaveTextContent("What to do next.");
});

test("an engine error handed over as data reads as its sentence, never [object Object]", async () => {
  const { toApiError } = await import("./api");
  expect(toApiError({ code: "invalid_input", message: "the provider \u201cmine\u201d needs a key and none was found" }).message).toBe(
    "The provider \u201cmine\u201d needs a key and none was found.",
  );
  expect(toApiError({ code: "invalid_input", message: "x" }).code).toBe("invalid_input");
  expect(toApiError("refused").message).toBe("Refused.");
  expect(toApiError({ nothing: 1 }).message).not.toContain("[object Object]");
  expect(toApiError(new Error("boom")).message).toBe("Boom.");
});
