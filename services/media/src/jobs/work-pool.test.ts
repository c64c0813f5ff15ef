import { expect, test } from "bun:test";
import { createWorkPool } from "./work-pool.ts";

test("never runs more tasks at once than its size, and runs every task", async () => {
  const pool = createWorkPool(2);
  let now = 0;
  let peak = 0;
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      pool.run(async () => {
        now++;
        peak = Math.max(peak, now);
        await Bun.sleep(5);
        now--;
        return i;
      }),
    ),
  );
  expect(results).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  expect(peak).toBe(2);
  expect(pool.active()).toBe(0);
});

test("a failing task frees its slot and its error reaches the caller", async () => {
  const pool = createWorkPool(1);
  await expect(pool.run(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
  expect(await pool.run(async () => "next")).toBe("next");
  expect(pool.active()).toBe(0);
});

test("waiting tasks start in arrival order", async () => {
  const pool = createWorkPool(1);
  const order: number[] = [];
  await Promise.all([1, 2, 3].map((n) => pool.run(async () => void order.push(n))));
  expect(order).toEqual([1, 2, 3]);
});

test("refuses a size that could never run anything", () => {
  expect(() => createWorkPool(0)).toThrow();
});
