// Logs in to the approvals page of a running `toolgate serve` with OpenID
// Connect in headless Chromium: opens the page, clicks "single sign-on",
// follows the provider's redirects (the tests' provider logs the user in
// without asking) and waits for the approvals view. Run by
// tests/ui_oidc.rs; prints one line `RESULT {...}` (who the page says is
// logged in, and the cookies' flags) and exits non-zero on a failed
// expectation.
//
// Environment: TOOLGATE_URL (http://127.0.0.1:PORT), CHROMIUM (default
// /usr/bin/chromium).

import { chromium } from "playwright-core";

const base = process.env.TOOLGATE_URL;
if (!base) throw new Error("missing environment variable TOOLGATE_URL");
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage"],
});
try {
  const page = await browser.newPage();
  await page.goto(`${base}/ui/`);
  await page.click('a[href="/ui/login/oidc"]');
  await page.waitForURL(`${base}/ui/`);
  await page.waitForSelector("#app-view", { state: "visible", timeout: 15000 });
  const me = await page.evaluate(async () => (await fetch("/ui/api/me")).json());
  const cookies = (await page.context().cookies()).map((c) => ({
    name: c.name,
    httpOnly: c.httpOnly,
    sameSite: c.sameSite,
  }));
  console.log(`RESULT ${JSON.stringify({ me, cookies })}`);
} finally {
  await browser.close();
}
