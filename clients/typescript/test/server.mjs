// The live server the tests run against: scripts/test (through tests/test_typescript_client.py)
// starts it and passes its root and tokens in the environment.
export const URL = process.env.MC_URL;
export const TOKEN = process.env.MC_TOKEN;
export const VIEWER_TOKEN = process.env.MC_VIEWER_TOKEN;
if (!URL || !TOKEN || !VIEWER_TOKEN) {
  throw new Error(
    "MC_URL, MC_TOKEN (admin) and MC_VIEWER_TOKEN must name a running server: " +
      "run these tests through tests/test_typescript_client.py (pytest) or scripts/test",
  );
}
/** A user id of this run's own, so tests never see each other's memories. */
export const user = (name) => `${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
