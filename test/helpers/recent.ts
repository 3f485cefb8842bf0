/**
 * An event time for fixtures that run on the real clock: an hour before this process started, as a
 * running agent's events are. The exporters re-send a cumulative series only while it is live (an
 * event within CLINE_OTEL_SERIES_TTL, 7 days by default, or an update since the last export): fixed
 * dates made every export-twice test fail once the calendar passed them by a week (on 2026-12-07).
 * A test of old history gives its own clock and dates.
 */
export const RECENT_MS = Date.now() - 3_600_000;
