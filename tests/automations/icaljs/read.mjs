// Reads an iCalendar feed on stdin as Thunderbird does (ical.js, its VTIMEZONEs registered) and
// prints each event's UID with its first occurrences in UTC, as JSON:
// [{"uid": "...", "summary": "...", "starts": ["2027-07-01T07:00:00.000Z", ...]}].
import ICAL from "ical.js";

const OCCURRENCES = Number(process.argv[2] || "5");
let text = "";
for await (const chunk of process.stdin) text += chunk;
const calendar = new ICAL.Component(ICAL.parse(text));
for (const zone of calendar.getAllSubcomponents("vtimezone")) {
  ICAL.TimezoneService.register(zone);
}
const events = calendar.getAllSubcomponents("vevent").map((component) => {
  const event = new ICAL.Event(component);
  const starts = [];
  const iterator = event.iterator();
  for (let next = iterator.next(); next && starts.length < OCCURRENCES; next = iterator.next()) {
    starts.push(next.toJSDate().toISOString());
    if (!event.isRecurring()) break;
  }
  return { uid: event.uid, summary: event.summary, starts };
});
process.stdout.write(JSON.stringify(events));
