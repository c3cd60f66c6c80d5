import { expect, test } from "vitest";
import { futureTime } from "./workflowText";

test("a run's time ahead is said in 24 hours, as schedules are", () => {
  const now = new Date(2030, 0, 3, 12, 0).getTime();
  const monday = new Date(2030, 0, 7, 9, 0).toISOString();
  expect(futureTime(monday, now)).toMatch(/ at 09:00$/);
  expect(futureTime(monday, now)).not.toMatch(/AM|PM/);
  const evening = new Date(2030, 0, 3, 19, 30).toISOString();
  expect(futureTime(evening, now)).toBe("today at 19:30");
});
