// A real headless browser for the page tests: Debian's Chromium driven by playwright-core. CI runs as root on a
// fresh machine, so a missing Chromium is installed with apt (the same helper the infrastructure runner uses).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";
import { aptInstall } from "../../../../infra/src/system-packages.ts";

export const CHROMIUM = "/usr/bin/chromium";

const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export async function ensureChromium(): Promise<string> {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0) {
    throw new Error(`the browser tests need Chromium at ${CHROMIUM}: install it with 'sudo apt-get install -y chromium' (not root, so the tests cannot install it)`);
  }
  // Another process may hold the dpkg lock (a colleague's test run installing the same package): retry a little.
  for (let attempt = 1; ; attempt++) {
    try {
      await aptInstall(["chromium"]);
    } catch (err) {
      if (existsSync(CHROMIUM)) break;
      if (attempt >= 3) throw new Error(`could not install Chromium with apt: ${(err as Error).message}`);
      await Bun.sleep(10_000);
      continue;
    }
    break;
  }
  if (!existsSync(CHROMIUM)) throw new Error(`apt installed chromium but ${CHROMIUM} does not exist`);
  return CHROMIUM;
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh profile directory per launch, removed on close. */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = await ensureChromium();
  const userDataDir = mkdtempSync(join(tmpdir(), "pss-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath, headless: true, args: ARGS, offline: false, javaScriptEnabled: true });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
