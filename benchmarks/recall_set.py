"""A deterministic quality benchmark for recall: long owner/assistant conversations with questions.

    .venv/bin/python benchmarks/recall_set.py [--seed 7]

``build()`` writes ``sessions`` conversations (default 40, at least ``turns_per_session`` turns
each, dated a few days apart) between the owner and the assistant. One persona runs through all
of them: a partner, children, parents, siblings and friends with names, a cat and a dog, work
projects with code names, a home, a car, health, money, hobbies, food and travel. Every turn comes
from the tables below, filled from pools with ``random.Random(seed)``, so a seed always gives the
same set; nothing is read from disk or the network.

Filler is small talk, reminders, shopping lists, drafts and the assistant's replies (two dozen
templates with shared slots, openers and closers: thousands of combinations). Into it the builder
plants fact-bearing turns, each followed by an acknowledgement, and records which turn answers
which question. Usually the support is the owner's turn; sometimes it is the assistant's (a
suggestion or a calendar answer the owner asked for), because assistant turns are retrievable
too. Sessions open with a greeting and often close with a goodbye; the rest is shuffled.

Question categories and what each one tests:

- ``exact``: the question hinges on a rare token: a made-up surname, a ticket code, a booking
  reference, an order or flight number ("What is Dr. Okonkwo's clinic phone extension?"). Each
  kind of fact is planted ten times (six asked about) with near-identical tokens (surnames
  sharing a first syllable, ticket keys sharing a prefix, order numbers sharing leading
  digits), so the candidates look alike to an embedding and only matching the whole token
  picks the right one.
- ``paraphrase``: the question shares (almost) no content words with its support; it uses
  synonyms and hypernyms ("My daughter started cello lessons" / "Which instrument is my kid
  learning?"), so keyword search alone cannot find it.
- ``multi``: needs 2-3 turns from different sessions: a pair ("What do my aunt and my cousin do
  for work?"), a list ("Which books have I told you I finished?") or a bridge (the vet is named in
  one session, what the vet said is in another).
- ``temporal_update``: a fact stated two or three times with different values in different
  sessions ("Where do I live now?"); the support is the latest statement, and the older ones are
  distractors that look just as relevant.
- ``distractor``: a topic ("the boiler service") named in at least seven turns of answerless
  chat, with exactly one turn that answers; the question's other words have to decide. For
  about half of them the owner asked the same question in an earlier session, before the answer
  existed, so the turn most like the question is not the one that answers it.

Turn ids are ``s{session:02d}-t{index:02d}``, both from 1. ``build`` checks its own invariants
(rare tokens occur only at their support, distractor topics are crowded, paraphrases share at
most one content word); running the module prints a summary and checks ids and supports.
"""

from __future__ import annotations

import argparse
import random
import re
import string
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta


@dataclass(frozen=True)
class Turn:
    id: str
    session: int
    role: str  # "user" | "assistant"
    text: str
    day: str  # ISO date


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    supporting: tuple[str, ...]
    category: str  # one of CATEGORIES


@dataclass(frozen=True)
class RecallSet:
    turns: list[Turn]
    questions: list[Question]


CATEGORIES = ("exact", "paraphrase", "multi", "temporal_update", "distractor")


def _table(block: str) -> list[tuple[str, ...]]:
    """One record a line (indented lines continue it), fields split on '|'."""
    records: list[str] = []
    for line in block.strip().splitlines():
        if line.startswith(" ") and records:
            records[-1] += " " + line.strip()
        else:
            records.append(line.strip())
    return [tuple(f.strip() for f in record.split("|")) for record in records]


def _alts(text: str) -> tuple[str, ...]:
    """Alternatives inside a field, split on '~'."""
    return tuple(" ".join(a.split()) for a in text.split("~"))


# Pools: "name: value ~ value ~ ...".
POOLS: dict[str, tuple[str, ...]] = {
    name.strip(): _alts(values)
    for name, values in (
        r[0].split(":", 1)
        for r in _table("""
female: Amara ~ Celeste ~ Elif ~ Greta ~ Ines ~ Leonie ~ Niamh ~ Priya ~ Rosalind ~ Tamsin ~
    Vesna ~ Wilhelmina ~ Zofia ~ Anouk ~ Delphine ~ Fenna ~ Hedda ~ Juno ~ Liesel ~ Marisol ~
    Odette ~ Pilar ~ Saoirse ~ Ula ~ Yara
male: Bastian ~ Dmitri ~ Farid ~ Hamish ~ Jonah ~ Kaveh ~ Mateo ~ Oskar ~ Quentin ~ Soren ~
    Ulrich ~ Xavier ~ Yusuf ~ Bram ~ Caius ~ Emeka ~ Gideon ~ Ivo ~ Kasimir ~ Nikolai ~ Rafferty ~
    Thaddeus ~ Valentin ~ Wren ~ Zeb
city: Bristol ~ Leeds ~ Norwich ~ York ~ Brighton ~ Sheffield ~ Exeter ~ Bath ~ Durham ~
    Lancaster ~ Cardiff ~ Glasgow ~ Nottingham ~ Canterbury ~ Inverness ~ Belfast
place: Lisbon ~ Krakow ~ the Isle of Skye ~ Ljubljana ~ Tromso ~ Seville ~ Tbilisi ~
    the Dolomites
weekday: Monday ~ Tuesday ~ Wednesday ~ Thursday ~ Friday ~ Saturday
time: 9:30 ~ 10:15 ~ 11:45 ~ 13:20 ~ 14:50 ~ 16:05 ~ 17:40
amount: 150 pounds ~ 220 pounds ~ 300 pounds ~ 375 pounds
amount2: 90 pounds ~ 140 pounds ~ 185 pounds
pct: four ~ six ~ eight ~ nine
weather: grey and drizzly ~ weirdly warm ~ freezing ~ really windy ~ bright but cold ~ muggy
chore: water the plants ~ take the bins out ~ order printer ink ~ defrost the freezer ~
    return the library books ~ pick up the dry cleaning ~ send the thank-you cards ~
    back up my photos
when: tonight ~ tomorrow morning ~ on Friday ~ after lunch ~ at six ~ this weekend
feeling: knackered ~ pretty good ~ a bit flat ~ wired ~ sleepy ~ weirdly cheerful
activity: tidying the spare room ~ a long walk ~ back-to-back meetings ~ batch cooking ~
    answering emails ~ clearing out the garage ~ sorting the recycling
dish: a lentil soup ~ a sausage traybake ~ fish tacos ~ a mushroom risotto ~ a stir fry ~
    shakshuka
idea: a rainy Sunday ~ a team icebreaker ~ using up stale bread ~ a cheap date night ~
    a picnic with kids ~ decluttering in fifteen minutes
group: the team ~ the neighbours' group chat ~ the parents' WhatsApp ~ the five-a-side lot
late: ten minutes late ~ working from home tomorrow ~ out on Friday ~ dialling in instead
show: a documentary about octopuses ~ a terrible reality show ~ an old Hitchcock film ~
    a baking competition ~ a true-crime series
verdict: better than expected ~ a bit of a slog ~ oddly moving ~ hilarious
pair: baking soda and baking powder ~ a latte and a flat white ~ affect and effect ~
    jam and jelly ~ a crocodile and an alligator ~ weather and climate
lunch: a sad desk salad ~ leftover pasta ~ a cheese sandwich ~ soup from the cafe
traffic: awful ~ surprisingly light ~ a nightmare near the roundabout ~ stop-start the whole way
fact: octopuses have three hearts. ~ honey basically never spoils. ~
    bananas are technically berries. ~ a day on Venus is longer than its year. ~
    wombat droppings are cube-shaped.
choice: a film or an early night ~ pizza or cooking ~ a swim or a walk ~ reading or gaming
mins: ten ~ twenty ~ twenty-five ~ forty-five
complaint: my inbox is out of control ~ the printer jammed again ~ I overslept ~
    I spilled tea on my notes ~ the train was cancelled
item: bin bags ~ lemons ~ washing-up liquid ~ eggs ~ basmati rice ~ kitchen roll ~ oat biscuits
goal: sleeping better ~ staying focused in the afternoon ~ drinking more water ~
    keeping the inbox under control
opener: Hey. ~ Hi! ~ Morning. ~ Okay. ~ Right. ~ Sorry, me again.
closer: Thanks. ~ Cheers. ~ No rush. ~ Any thoughts?
lead: Quick update. ~ Oh, before I forget. ~ Random thing. ~ So.
tail: Anyway. ~ Just so you know. ~ Thought I'd mention it.
ack1: Got it. ~ Noted. ~ Thanks for letting me know. ~ Okay, I'll remember that. ~ Good to know. ~
    Understood. ~ Oh, interesting. ~ Makes sense.
ack2: Want me to set a reminder? ~ I've saved that to your memories. ~
    Anything you'd like me to do about it? ~ Let me know if that changes. ~
    How do you feel about it?
""")
    )
}
NAMES = POOLS["female"] + POOLS["male"]

# Filler: user template | assistant replies (slots are shared).
FILLER = _table("""
The weather here is {weather} today. | Sounds like a good day for staying in. ~
    Hopefully it clears up later. Want me to check the forecast?
Can you remind me to {chore} {when}? | Sure, I'll remind you to {chore} {when}. ~
    Done: a reminder to {chore}, {when}.
I'm {feeling} after {activity}. | That's fair after {activity}. Take it easy tonight. ~
    Sounds like you've earned a break.
Give me three ideas for {idea}. |
    Three options for {idea}: keep it short, make it a game, or turn it into a routine. ~
    Here are three: something simple, something social and something under an hour. Want details?
What should I cook tonight? I have the basics. |
    How about {dish}? It's quick and uses pantry staples. ~
    You could do {dish}; it keeps well for lunch tomorrow.
Can you draft a message to {group} saying I'll be {late}? |
    Here's a draft: 'Hi all, just a heads-up that I'll be {late}. Thanks!' ~
    Draft: 'Quick note, I'll be {late}. Shout if anything urgent comes up.'
I watched {show} last night. It was {verdict}. | Nice. Would you recommend it? ~
    Glad you found time to switch off.
What's the difference between {pair}? |
    Short version: they're often confused, but they differ in origin and usage. Want examples? ~
    Good question. The main difference is in how each is used; I can go deeper if useful.
Lunch was {lunch}. Nothing exciting. | Not every lunch can be a highlight. ~
    Maybe plan something nicer for tomorrow?
I spent the afternoon on {activity}. | Productive! How did it go? ~
    That sounds like a solid afternoon.
Traffic this morning was {traffic}. |
    Commutes, eh. Want me to check the roads before you leave tomorrow? ~
    Noted. At least you made it in.
Can you summarise tomorrow for me? |
    Tomorrow looks fairly light: a couple of calls in the morning and a free afternoon. ~
    A busy morning, then a quieter afternoon.
Tell me something interesting. | Here's one: {fact} ~ Fun fact: {fact}
I can't decide between {choice} tonight. | If you're tired, go with the easier option. ~
    Flip a coin and notice which result you were hoping for.
Thanks, that's really helpful. | Any time! ~ Glad it helped. ~ You're welcome.
Can you read me my reminders for today? | Just the usual today: {chore} {when}. ~
    Only one: {chore} {when}.
Set a timer for {mins} minutes. | Timer set for {mins} minutes. ~
    Okay, {mins} minutes starting now.
Ugh, {complaint}. | Oh no. Anything I can do to help? ~
    That's annoying. Hope the rest of the day is better.
Can you add {item} to the shopping list? | Added {item} to the shopping list. ~
    Done, {item} is on the list.
Any tips for {goal}? |
    Small, consistent habits help most: pick one change and keep it for a week. ~
    Try a fixed routine and remove the obvious distractions.
""")
GREETINGS = [
    ("Morning! Just checking in.", "Morning! What's on your mind today?"),
    ("Hi, I'm back.", "Welcome back. How can I help?"),
    ("Hello again, a few things today.", "Of course, go ahead."),
    ("Evening. Long day.", "Sorry to hear it. What can I take off your plate?"),
    ("Hey, got a minute?", "Always. What's up?"),
]
GOODBYES = [
    ("Right, I'm off for the night.", "Sleep well!"),
    ("That's all for now, thanks.", "Any time. See you soon."),
    ("Okay, signing off.", "Good night, talk tomorrow."),
    ("Cheers, speak later.", "Take care!"),
]

# Exact: token kind | statements | questions. {S} is a made-up surname, {C} a code, {N} a
# number, {F} a first name; the "assistant" kind answers on the assistant's side.
EXACT = _table("""
n4 | Dr. {S}'s clinic extension is {N}, in case I need to call back. ~
    If I need to reach Dr. {S} again, the clinic line is extension {N}. |
    What is Dr. {S}'s clinic phone extension? ~ Which extension do I dial for Dr. {S}?
code | Ticket {C} got reassigned to {F} this morning. ~
    {F} picked up ticket {C}, so I can stop worrying about it. | Who is working on ticket {C}? ~
    Who has ticket {C} now?
ref | The booking reference for Hotel {S} is {C}. ~ Hotel {S} confirmed, reference {C}. |
    What's the booking reference for Hotel {S}? ~ Which reference number did Hotel {S} give me?
n4 | {S} and Sons quoted {N} pounds for the {J}. ~
    Got a quote from {S} and Sons: {N} pounds for the {J}. | How much did {S} and Sons quote? ~
    What was the {S} and Sons quote?
n6 | Order #{N} is the {I} from the hardware place. ~
    Tracking says order #{N}, the {I}, arrives next week. | What did I buy in order #{N}? ~
    Which item is order #{N}?
n4 | The keypad code for the {S} Street {P} is {N}. ~ Door code at {S} Street {P}: {N}. |
    What's the keypad code for {S} Street? ~ Which door code gets me into the {S} Street {P}?
flight | I'm on flight {C} to {T} on {due}. ~ Flight {C} to {T} is confirmed for {due}. |
    Where is flight {C} going? ~ What's the destination of flight {C}?
assistant | Your call with {F} {S} is on {W} at {H}. ~
    You're down to speak with {F} {S} on {W} at {H}. | When is my call with {S}? ~
    What time is the {S} call?
""")
EXACT_SLOTS = {
    "J": _alts("gutters ~ loft insulation ~ garden wall ~ patio ~ chimney ~ bathroom tiling"),
    "I": _alts("cordless drill ~ ladder ~ tile cutter ~ stud finder ~ pressure washer ~ sander"),
    "P": _alts("office ~ studio ~ lockup ~ warehouse ~ gym ~ flat"),
    "T": _alts("Reykjavik ~ Bergen ~ Valencia ~ Bologna ~ Vilnius ~ Porto"),
}

# Paraphrase: support | question [| prompt]. With a prompt, the owner asks it and the
# assistant's reply is the support.
PARAPHRASE = _table("""
My daughter {kid} started cello lessons last week. | Which instrument is my kid learning?
I've been seeing a physiotherapist about my knee since {past}. |
    What kind of medical specialist is treating my joint injury?
My partner {partner} is allergic to shellfish, so no prawns when we cook. |
    Which seafood must my significant other avoid?
I switched to oat milk in my tea. | What dairy alternative do I put in my hot drink?
{cat}, our tabby, hides under the bed during thunderstorms. | What weather scares the cat?
I'm saving up for a secondhand campervan. | What vehicle am I putting money aside to buy?
My mum {mum} had her hip replaced in {past}. | What surgery did my mother undergo?
I can't stand coriander, it tastes like soap to me. | Which herb do I dislike?
My son {son} got into the university robotics society. |
    What extracurricular group did my boy join?
I'm training for a half marathon in {soon}. | What running race am I preparing for?
The boiler broke again and the flat was freezing. | What heating appliance failed at home?
I've started learning Portuguese on my lunch breaks. | Which language am I studying?
I get migraines whenever I skip breakfast. | What triggers my headaches?
We adopted a rescue greyhound called {dog}. | What breed is the dog we took in from the shelter?
I'm vegetarian on weekdays and only eat meat at weekends. |
    On which days do I stick to a plant-based diet?
My grandfather taught me chess when I was seven. |
    Which board game did my grandpa show me as a child?
I put {amount} a month into my pension. | How much do I set aside for retirement regularly?
The landlord is raising the rent by {pct} percent from {soon}. |
    By how much is my housing cost going up?
I'm lactose intolerant, so cheese is mostly off the menu. | What digestive condition do I have?
My niece {niece} is playing the witch in the school play. |
    What role does my sibling's daughter have in the theatre production?
I booked a pottery class for {weekday} evening. | What craft workshop did I sign up for?
My doctor put me on statins for my cholesterol. | What medication did the physician prescribe?
We're repainting the nursery a pale sage green. | What colour are we doing the baby's room?
I sprained my ankle playing five-a-side football. | How did I hurt my foot?
My sister {sister} is expecting twins in {soon}. |
    When will the new babies in the family arrive?
I'm terrified of flying, so I take the train whenever I can. |
    How do I prefer to travel given my fear of planes?
I finally paid off the car loan. | Which debt did I clear recently?
Our neighbour {neighbour} is keeping an eye on the house while we're away. |
    Who is watching our home during the trip?
I gave up caffeine in {past}. | When did I quit coffee?
I'm reading a biography of Ada Lovelace. | Whose life story is the book I'm on at the moment?
The car failed its MOT because of the brakes. | Why didn't the vehicle pass its inspection?
I want the kitchen worktops replaced with oak. |
    Which material am I hoping to use for the new counters?
{friend} and I go bouldering every Tuesday. |
    Which climbing activity do I do weekly with a mate?
My blood pressure reading was 128 over 82. | What were my latest cardiovascular numbers?
I'm allergic to penicillin. | Which antibiotic can't I take?
My son asked for a telescope for his birthday. | What gift does my boy want?
I sold my old bike on a marketplace app for {amount2}. | How much did I get for my bicycle?
Grandma {grandma} turns ninety next spring. | How old will my grandmother be?
I keep my passport in the blue folder in the desk drawer. | Where is my travel document stored?
My nephew {nephew} just passed his grade five trumpet exam. |
    What brass qualification did my sibling's son get?
We're thinking of getting solar panels on the south-facing roof. |
    What renewable energy upgrade are we considering for the house?
Try a chickpea and spinach curry with coconut milk; it takes about twenty minutes. |
    What meal did you propose for the tinned beans? |
    I need a quick dinner using up the leftover chickpeas.
I'd go for Becky Chambers next; the Wayfarers series has the same warmth. |
    Which science fiction writer did you recommend? |
    What should I read after finishing the Le Guin books?
A lakeside cabin near Bled would be lovely and peaceful. |
    Where did you propose we go to celebrate being married another year? |
    Can you suggest somewhere quiet for our anniversary?
A snake plant or a ZZ plant copes well with low light. |
    Which greenery did you say would tolerate the shady spot? |
    Which houseplant survives in a dark corner?
Try cat-cow and child's pose for a few minutes each evening. |
    Which yoga positions did you advise for my spine? |
    My lower back is stiff after long drives, any stretches?
Put a tall sisal post right next to the sofa and reward her when she uses it. |
    What did you suggest to protect the couch from claws? |
    How can I stop the cat scratching the sofa?
""")

RELATIVES = ("sister", "brother", "cousin", "aunt", "uncle", "best friend")
# Multi, one attribute per relative: statement | values | question about two relatives.
FAMILY = _table("""
My {r} {n} has been working as a {v} for a couple of years now. | midwife ~ structural engineer ~
    sommelier ~ court stenographer ~ beekeeper ~ air traffic controller ~ locksmith ~ podiatrist |
    What do my {r1} and my {r2} do for work?
I got my {r} {n} {v} for their birthday. | a leather-bound journal ~ noise-cancelling headphones ~
    a pasta maker ~ a star map print ~ a cast-iron skillet ~ a sourdough kit |
    What birthday presents did I give my {r1} and my {r2}?
My {r} {n} has got really into {v} lately. | birdwatching ~ sea swimming ~ woodturning ~ archery ~
    calligraphy ~ fly fishing | Which hobbies have my {r1} and my {r2} taken up?
""")
# Multi, three items: question | statements | values ("@pool" names a pool).
LISTS = _table("""
Which places have I booked trips to this year? | Booked a long weekend in {v}. ~
    Flights to {v} are sorted for {soon}. ~ Just confirmed the trip to {v}. | @place
Which books have I told you I finished? | Finished {v} last night, loved it. ~
    Just got to the end of {v}; that ending! ~ Done with {v} finally. | The Salt Orchard ~
    Nine Winters ~ A Map of Small Fires ~ The Glass Ferry ~ Under Kestrel Hill ~
    The Cartographer's Dog
Which restaurants have I enjoyed recently? | Dinner at {v} was fantastic. ~
    We tried {v} on Saturday and it was brilliant. ~ {v} did the best meal I've had in ages. |
    Bocca Lupo ~ The Tamarind Tree ~ Casa Ombra ~ Little Sichuan ~ The Fig and Anchor ~
    Osteria Nuvola
What has needed fixing around the house? | Someone came round to fix the {v} today. ~
    The {v} finally got repaired. ~ Had to get the {v} sorted this week. | kitchen tap ~
    back door lock ~ bathroom extractor fan ~ garage door ~ loft hatch ~ shower mixer
Which films have I watched with my partner lately? | Watched {v} with {partner} last night. ~
    {partner} and I finally saw {v}. ~ Film night with {partner}: {v}. | The Lighthouse Keepers ~
    Paper Moons ~ Long Road North ~ The Quiet Harbour ~ Satellite Summer ~ Iron and Honey
""")
# Multi, bridges: first statement | second statement | question; {S} is a made-up surname.
BRIDGES = _table("""
{dog}'s vet is Dr. {S} at the practice on the high street. |
    Dr. {S} says {dog} needs a dental clean before the summer. |
    What did our dog's vet say it needs?
{kid}'s form tutor this year is Ms {S}. |
    Ms {S} emailed to say {kid} has been picked for the maths olympiad. |
    What did my daughter's tutor email about?
We've hired {S} Builders for the loft conversion. |
    {S} Builders say the joists need strengthening before anything else. |
    What do the loft conversion builders say needs doing first?
My mentor at work is {mentor} {S}. |
    {mentor} suggested I put myself forward for the platform lead role. |
    What advice did my work mentor give me?
""")
# Temporal: question | first statements | updates | values ("@pool", or "#surname"/"#password"
# for made-up ones). Relatives' homes and project deadlines reuse the last two shapes.
TEMPORAL = _table("""
Where do I live now? | I live in {v}, not far from the river. ~
    Our flat in {v} is tiny but I love it. | We relocated to {v} last weekend, boxes everywhere. ~
    Moved house again; home is {v} now. | @city
Which company am I working for at the moment? | I've been at {v} for three years now. |
    I accepted the offer from {v}, starting Monday. ~ First week at {v} done, new badge and all. |
    Brightwave Analytics ~ Quarrymoor Logistics ~ Halcyon Robotics ~ Tidewell Insurance ~
    Copperleaf Studios
What car do I drive these days? | I drive an old {v}. | Traded in the old car for a {v}. ~
    Picked up the {v} from the dealer today. | Skoda Octavia ~ Honda Jazz ~ Volvo V60 ~ Kia Niro ~
    Mazda 3
Which day do I go to the gym now? | Gym is on {v}s for me. | I've moved my gym sessions to {v}s. ~
    Switching the gym to {v}s from now on. | @weekday
How much does {dog} weigh now? | {dog} weighed in at {v} kilos at the vet. |
    {dog} is at {v} kilos now. ~ Weighed {dog} again: {v} kilos. | 24.5 ~ 26 ~ 27.5 ~ 29 ~ 31
What is my monthly grocery budget now? | My grocery budget is {v} pounds a month. |
    I'm changing the food shopping budget to {v} pounds a month. | 320 ~ 360 ~ 410 ~ 450
Who is my manager now? | My manager {v} is pretty reasonable. |
    {v} has taken over as my line manager. | @names
Who is my GP now? | My GP is Dr. {v}. | I've registered with Dr. {v} at the new surgery. | #surname
Who is {kid}'s teacher this term? | {kid}'s teacher is {v}. |
    {kid} has a new teacher, {v}, after the reshuffle. | @names
What's my current 5k personal best? | My 5k best is {v}. | New 5k PB this morning: {v}! ~
    Knocked my 5k down to {v} today. | 27:40 ~ 26:55 ~ 26:10 ~ 25:32 ~ 24:48
What dose of amlodipine am I on now? | I take {v} mg of amlodipine every morning. |
    The doctor changed my amlodipine to {v} mg. | 2.5 ~ 5 ~ 7.5 ~ 10
What is the wifi password now? | The wifi password is {v}. | I changed the wifi password to {v}. |
    #password
How much am I saving for the house deposit now? | I'm aiming to save {v} for a house deposit. |
    Revised the house deposit target to {v}. | 18,000 pounds ~ 22,500 pounds ~ 25,000 pounds ~
    30,000 pounds
What shifts does {partner} work now? | {partner} is on {v} at the hospital. |
    {partner} has switched to {v}. | night shifts ~ day shifts ~ weekend shifts ~ early shifts
Which phone do I have now? | My phone is a {v}. | Finally replaced my phone; I've got a {v}. |
    Pixel 6 ~ iPhone 12 ~ Fairphone 4 ~ Galaxy S21 ~ Nokia X30
What time do I start work now? | I start work at {v}. | New hours: I start at {v} from now on. |
    7:30 ~ 8:00 ~ 8:30 ~ 9:00 ~ 9:30
""")
REL_MOVE = _table("""
Where does my {r} live now? | My {r} {n} lives in {v}. | My {r} {n} just moved to {v}. ~
    {n}, my {r}, has relocated to {v}.
""")[0]
PROJECT_DUE = _table("""
What is the current deadline for Project {P}? | Project {P} is due on {due}. |
    {P} slipped again; the new deadline is {due}. ~
    Good news, we pulled Project {P} forward to {due}.
""")[0]
PROJECTS = _alts(
    "Heron ~ Basalt ~ Juniper ~ Quasar ~ Tamarind ~ Osprey ~ Meridian ~ Lantern ~ "
    "Kestrel ~ Sorrel ~ Bramble ~ Cobalt"
)

# Distractor: topic | support | question | values [| prompt]. The topic also comes up in six
# answerless turns, and for about half the topics the owner asked the question in an earlier
# session, before the answer existed; with a prompt the assistant's reply is the support.
DISTRACTOR = _table("""
the dentist | The dentist booked me in for {x} on Thursday. |
    What time did the dentist book me in for? | 8:40 ~ 9:15 ~ 11:30
the garden shed | The garden shed needs new felt, about {x} square metres. |
    How much felt does the garden shed need? | six ~ eight ~ ten
car insurance | Car insurance renewal came in at {x} pounds, daylight robbery. |
    How much was the car insurance renewal? | 612 ~ 748 ~ 835
the washing machine | The engineer said the {x} on the washing machine is broken. |
    Which part of the washing machine did the engineer say is broken? | drum bearing ~ door seal ~
    drain pump
book club | For book club this month we're reading {x}. | What is book club reading this month? |
    Middlemarch ~ The Remains of the Day ~ Piranesi
piano lessons | Piano lessons cost {x} pounds per half hour. |
    How much do piano lessons cost per half hour? | 18 ~ 22 ~ 25
the tax return | I need the P60 and {x} before I can file the tax return. |
    What documents do I need to file the tax return? | my pension statement ~
    the rental income figures ~ the charity receipts
the kitchen renovation | We picked {x} tiles for the kitchen renovation. |
    Which tiles did we pick for the kitchen renovation? | terracotta ~ white metro ~
    green zellige
the wedding | The wedding is at {x}, so we'll need a hotel nearby. |
    Where is the wedding being held? | Haddon Hall ~ a barn near Ludlow ~ the botanical gardens
the team offsite | The team offsite will be hosted at {x}. |
    Where is the team offsite being hosted? | a converted mill in Hebden Bridge ~
    a golf hotel outside Reading ~ a farm near Stroud
the quarterly report | {X} is writing the finance section of the quarterly report. |
    Who is writing the finance section of the quarterly report? | Declan from finance ~
    Sofia on the ops team ~ the new analyst, Raj
the holiday cottage | The holiday cottage key is in a lockbox by the {x}. |
    Where is the key for the holiday cottage kept? | woodshed ~ back gate ~ oil tank
the passport renewal | The passport renewal should arrive within {x}. |
    How long will the passport renewal take to arrive? | three weeks ~ ten days ~ six weeks
the boiler service | The boiler service is booked for {x} morning. |
    When is the boiler service booked for? | Monday ~ Wednesday ~ Friday
the allotment | At the allotment I planted {x} this weekend. |
    What did I plant at the allotment? | broad beans ~ garlic ~ rhubarb crowns
the choir concert | The choir concert programme includes {x}. |
    What piece is on the choir concert programme? | Faure's Requiem ~ Zadok the Priest ~
    a Beatles medley
the broadband | The broadband engineer is coming on {x} between eight and one. |
    When is the broadband engineer coming? | Monday ~ Wednesday ~ Friday
the mortgage | The mortgage fix ends in {x}, so we need to remortgage before then. |
    When does the mortgage fix end? | March ~ August ~ November
the new laptop | Go for the new laptop with {x} of RAM; it'll last you longer. |
    How much RAM did you recommend for the new laptop? | 16GB ~ 32GB ~ 64GB |
    Which new laptop should I get?
the fence | The neighbours agreed to split the cost of the fence {x}. |
    How are we splitting the fence cost with the neighbours? | fifty-fifty ~ sixty-forty ~
    by length of frontage
the birthday party | For the birthday party we hired {x}. |
    What did we hire for the birthday party? | a bouncy castle ~ a magician ~ a face painter
the vet visit | At the vet visit they gave the cat {x}. | What did the cat get at the vet visit? |
    a booster jab ~ worming tablets ~ a flea treatment
the conference talk | My slot for the conference talk is {x} on day two. |
    When is my conference talk slot? | straight after lunch ~ first thing ~ the last session
the camping trip | For the camping trip, bring {x}; the site has no shop. |
    What did you say I should bring on the camping trip? | a spare gas canister ~
    midge repellent ~ a mallet for the pegs | What am I forgetting for the camping trip?
the knitting project | The knitting project needs {x} balls of wool. |
    How many balls of wool does the knitting project need? | seven ~ nine ~ twelve
the dance class | The dance class is at the church hall on {x} Street. |
    Which street is the dance class on? | Elm ~ Carver ~ Wharf
the bike repair | The bike repair shop says the {x} needs replacing. |
    What needs replacing according to the bike repair shop? | chain ~ rear derailleur ~
    bottom bracket
the electricity bill | The electricity bill jumped to {x} pounds this quarter. |
    How much was the electricity bill this quarter? | 412 ~ 389 ~ 455
the driving test | My nephew's driving test is at the {x} test centre. |
    Which test centre is my nephew's driving test at? | Wymondham ~ Chertsey ~ Heaton
the job interview | The panel for the job interview is {x}. | Who is on the job interview panel? |
    the CTO and two engineers ~ the head of product ~ an HR partner and the founder
the charity run | I've raised {x} pounds for the charity run so far. |
    How much have I raised for the charity run? | 340 ~ 515 ~ 780
the dinner party | For the dinner party dessert, a {x} would be easy to make ahead. |
    What dessert did you suggest for the dinner party? | lemon posset ~ tiramisu ~
    pear tarte tatin | Any ideas for a dessert for the dinner party?
the roof leak | The roofer traced the roof leak to {x}. |
    What did the roofer trace the roof leak to? | a cracked ridge tile ~ the chimney flashing ~
    a blocked gutter
the removal van | The removal van is booked with {x}. |
    Which company is the removal van booked with? | Swift Shift ~ Pickfords ~ Two Men and a Van
the school trip | The school trip costs {x} pounds and the form is due Friday. |
    How much does the school trip cost? | 45 ~ 60 ~ 28
""")
CHATTER_USER = _alts("""
Still thinking about {t}, no decision yet. ~ Remind me to come back to {t} later this week. ~
Can we park {t} until after the weekend? ~ I was chatting with {friend} about {t} at lunch. ~
Honestly, {t} is the least of my worries right now. ~ Not much news on {t}, I'll let you know. ~
Why does {t} always turn into such a saga? ~ Add {t} to the list of things to look at. ~
{friend} asked about {t} again. ~ I keep putting off {t}.""")
CHATTER_ASSISTANT = _alts("""
No problem, we can pick up {t} whenever suits you. ~ Okay, I've noted that {t} is still open. ~
Would a reminder about {t} help? ~ Understood, I'll leave {t} alone for now. ~
Happy to help with {t} when you're ready. ~ Sounds like {t} is taking a lot of energy. ~
Sure. Shall I put {t} on tomorrow's list?""")

ECHO_TAILS = _alts("I can't remember. ~ Do you know? ~ It's gone clean out of my head.")
NOT_YET = _alts("""
I don't have that yet; tell me once you know. ~ You haven't mentioned it so far. Want me to
remind you to find out? ~ Nothing on that yet, as far as I know.""")

_SYLLABLES = (
    _alts("Ok ~ Zu ~ Bel ~ Thr ~ Kv ~ Mar ~ Ysel ~ Dro ~ Quil ~ Hav ~ Brae ~ Ngu ~ Vos ~ Tal ~ Ek"),
    _alts("on ~ ar ~ il ~ ev ~ ush ~ or ~ ani ~ ek ~ ul ~ ay"),
    _alts("kwo ~ ski ~ dottir ~ quist ~ enko ~ ard ~ ez ~ wyn ~ berg ~ ic ~ ado ~ sson"),
)
_STOP = frozenset(
    """a an the and or but of to in on at for with by from up about into over after is are was
    were be been being do does did have has had i me my we our us you your it its this that what
    which who whom whose when where why how can could would should will not no so as am im ive
    id ill dont didnt cant just there their they them he she his her him than then now new any
    some each every""".split()  # noqa: SIM905
)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower().replace("'", "")) if w not in _STOP}


def content_overlap(question: str, support: str) -> int:
    """Content words of the question that match one in the support (5-letter prefix as stem)."""
    stems = {w[:5] for w in _words(support)}
    return sum(w[:5] in stems for w in _words(question))


def _fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def _join(*parts: str) -> str:
    return " ".join(p for p in parts if p)


@dataclass
class _Draft:
    role: str
    text: str
    key: int


Pair = tuple[_Draft, _Draft]


@dataclass
class _Builder:
    rng: random.Random
    sessions: int
    days: list[date] = field(default_factory=list)
    persona: dict[str, str] = field(default_factory=dict)
    projects: list[str] = field(default_factory=list)
    planted: list[list[Pair]] = field(default_factory=list)
    # (question, support keys, category, rare token or topic, keys of superseded statements)
    asked: list[tuple[str, tuple[int, ...], str, str, tuple[int, ...]]] = field(
        default_factory=list
    )
    used: set[str] = field(default_factory=set)
    keys: int = 0

    def fill(self, template: str, **given: str) -> str:
        values = {**self.persona, **given}
        for name in sorted(_fields(template) - values.keys()):
            values[name] = self.rng.choice(POOLS[name])
        return template.format(**values)

    def maybe(self, pool: str, chance: float) -> str:
        return self.rng.choice(POOLS[pool]) if self.rng.random() < chance else ""

    def unique(self, make: Callable[[], str] | Sequence[str]) -> str:
        while True:
            value = make() if callable(make) else self.rng.choice(make)
            if value not in self.used:
                self.used.add(value)
                return value

    def surname(self, first: str = "") -> str:
        """A made-up surname; ``first`` fixes its first syllable (near-identical siblings)."""
        return self.unique(
            lambda: (
                (first or self.rng.choice(_SYLLABLES[0]))
                + "".join(self.rng.choice(s) for s in _SYLLABLES[1:])
            )
        )

    def digits(self, n: int, head: str = "") -> str:
        return self.unique(
            lambda: (
                head + "".join(self.rng.choice(string.digits) for _ in range(n - len(head)))
                if head
                else str(self.rng.randrange(10 ** (n - 1), 10**n))
            )
        )

    def code(self, head: str, numbers: int) -> str:
        return self.unique(
            lambda: head + "".join(self.rng.choice(string.digits) for _ in range(numbers))
        )

    def spread(self, k: int) -> list[int]:
        """k sessions, all different when there are enough of them."""
        cycle = self.rng.sample(range(self.sessions), self.sessions) * (k // self.sessions + 1)
        return cycle[:k]

    def session(self) -> int:
        """A random session, the less crowded of two draws."""
        a, b = self.rng.randrange(self.sessions), self.rng.randrange(self.sessions)
        return a if len(self.planted[a]) <= len(self.planted[b]) else b

    def pair(self, session: int, user: str, assistant: str) -> tuple[int, int]:
        drafts = (_Draft("user", user, self.keys), _Draft("assistant", assistant, self.keys + 1))
        self.keys += 2
        self.planted[session].append(drafts)
        return drafts[0].key, drafts[1].key

    def fact(self, session: int, template: str, prompt: str = "", **given: str) -> int:
        """Plant a fact with its reply; returns the key of the turn that states it.

        ``{past}`` and ``{soon}`` are months before and after the session's day, ``{due}`` a date
        a few weeks after it.
        """
        day = self.days[session]
        past = day - timedelta(self.rng.randint(25, 90))
        soon = day + timedelta(self.rng.randint(35, 120))
        due = day + timedelta(self.rng.randint(12, 70))
        given = {"past": f"{past:%B}", "soon": f"{soon:%B}", "due": f"{due.day} {due:%B}", **given}
        text = self.fill(template, **given)
        if prompt:
            return self.pair(session, prompt, text)[1]
        user = _join(self.maybe("lead", 0.35), text, self.maybe("tail", 0.3))
        return self.pair(session, user, _join(self.fill("{ack1}"), self.maybe("ack2", 0.6)))[0]

    def ask(
        self,
        text: str,
        keys: tuple[int, ...],
        category: str,
        token: str = "",
        old: tuple[int, ...] = (),
    ) -> None:
        self.asked.append((text, keys, category, token, old))

    def exact(self) -> None:
        for kind, statements, questions in EXACT:
            # Siblings share a first syllable, a code prefix or leading digits, as a real
            # project's ticket keys or one airline's flights do: alike to an embedding.
            first = self.rng.choice(_SYLLABLES[0])
            letters = "".join(self.rng.choice(string.ascii_uppercase) for _ in range(3))
            head = {"ref": letters, "flight": letters[:2] + " "}.get(kind, letters + "-")
            lead = str(self.rng.randrange(10, 100))
            for i in range(10):  # six asked about, four more as look-alikes
                v = {k: self.rng.choice(pool) for k, pool in EXACT_SLOTS.items()}
                v |= {"S": self.surname(first), "C": self.code(head, 5 if kind == "ref" else 4)}
                v["N"] = self.digits(6, lead) if kind == "n6" else self.digits(4)
                v["F"] = self.unique(NAMES) if kind in ("code", "assistant") else ""
                v |= {"W": self.rng.choice(POOLS["weekday"]), "H": self.rng.choice(POOLS["time"])}
                statement = self.rng.choice(_alts(statements))
                question = self.rng.choice(_alts(questions)).format(**v)
                token = {"n6": v["N"], "code": v["C"], "flight": v["C"]}.get(kind, v["S"])
                prompt = f"When's my call with {v['F']} {v['S']}?" if kind == "assistant" else ""
                key = self.fact(self.session(), statement, prompt, **v)
                if i < 6:
                    self.ask(question, (key,), "exact", token)

    def paraphrase(self) -> None:
        for support, question, *prompt in PARAPHRASE:
            key = self.fact(self.session(), support, *prompt)
            self.ask(question, (key,), "paraphrase")

    def multi(self) -> None:
        relatives = list(RELATIVES)
        for statement, values, question in FAMILY:
            self.rng.shuffle(relatives)  # neighbours pair up, and spread() keeps them apart
            chosen = self.rng.sample(_alts(values), len(relatives))
            where = self.spread(len(relatives))
            keys = {
                r: self.fact(s, statement, r=r, n=self.persona[r], v=v)
                for r, v, s in zip(relatives, chosen, where, strict=True)
            }
            for r1, r2 in zip(relatives[::2], relatives[1::2], strict=True):
                self.ask(self.fill(question, r1=r1, r2=r2), (keys[r1], keys[r2]), "multi")
        for question, statements, values in LISTS:
            pool = POOLS[values[1:]] if values.startswith("@") else _alts(values)
            items = zip(self.spread(3), self.rng.sample(pool, 3), strict=True)
            keys = tuple(self.fact(s, self.rng.choice(_alts(statements)), v=v) for s, v in items)
            self.ask(question, keys, "multi")
        for first, second, question in BRIDGES:
            s1, s2 = sorted(self.spread(2))
            surname = self.surname()
            key1 = self.fact(s1, first, S=surname)
            self.ask(question, (key1, self.fact(s2, second, S=surname)), "multi")
        led = self.projects[6:]
        keys_p = [
            self.fact(s, f"Project {p} is being led by {self.unique(NAMES)}.")
            for p, s in zip(led, self.spread(len(led)), strict=True)
        ]
        for i in range(0, len(led), 2):
            question = f"Who leads Project {led[i]} and Project {led[i + 1]}?"
            self.ask(question, (keys_p[i], keys_p[i + 1]), "multi")

    def chain(self, shape: tuple[str, ...], values: list[str], **given: str) -> None:
        """State values[0], then each update in a later session; the last one answers."""
        question, first, updates = shape[:3]
        keys = [
            self.fact(s, self.rng.choice(_alts(first if i == 0 else updates)), v=v, **given)
            for i, (s, v) in enumerate(zip(sorted(self.spread(len(values))), values, strict=True))
        ]
        self.ask(self.fill(question, **given), (keys[-1],), "temporal_update", old=tuple(keys[:-1]))

    def temporal(self) -> None:
        for shape in TEMPORAL:
            stages, pool = self.rng.choice((2, 3)), shape[3]
            if pool == "#surname":
                values = [self.surname() for _ in range(stages)]
            elif pool == "#password":
                values = [self.surname().lower() + self.digits(3) for _ in range(stages)]
            else:
                choices = NAMES if pool == "@names" else POOLS.get(pool[1:]) or _alts(pool)
                values = [self.unique(choices) for _ in range(stages)]
            self.chain(shape, values)
        for r in ("sister", "brother", "cousin"):
            values = [self.unique(POOLS["city"]) for _ in range(self.rng.choice((2, 3)))]
            self.chain(REL_MOVE, values, r=r, n=self.persona[r])
        for p in self.projects[:6]:
            self.chain(PROJECT_DUE, [""] * self.rng.choice((2, 2, 3)), P=p)

    def distractor(self) -> None:
        for topic, support, question, values, *prompt in DISTRACTOR:
            x, where = self.rng.choice(_alts(values)), self.session()
            key = self.fact(where, support, *prompt, x=x, X=x[0].upper() + x[1:])
            self.ask(question, (key,), "distractor", topic)
            for _ in range(3):
                user = self.fill(self.rng.choice(CHATTER_USER), t=topic)
                assistant = self.fill(self.rng.choice(CHATTER_ASSISTANT), t=topic)
                self.pair(self.session(), user[0].upper() + user[1:], assistant)
            if not prompt and where > 0 and self.rng.random() < 0.5:
                # The owner asked before the answer existed: every question word, no answer.
                asked = f"{question} {self.rng.choice(ECHO_TAILS)}"
                self.pair(self.rng.randrange(where), asked, self.rng.choice(NOT_YET))

    def filler(self) -> tuple[str, str]:
        user, replies = self.rng.choice(FILLER)
        reply = self.rng.choice(_alts(replies))
        values = {n: self.rng.choice(POOLS[n]) for n in sorted(_fields(user) | _fields(reply))}
        closer = self.maybe("closer", 0.4) if user.endswith("?") else ""
        return _join(self.maybe("opener", 0.4), user.format(**values), closer), reply.format(
            **values
        )


def build(seed: int = 7, sessions: int = 40, turns_per_session: int = 30) -> RecallSet:
    """Build the set; a session has more than ``turns_per_session`` turns only if facts crowd in."""
    if sessions < 3:
        raise ValueError("need at least 3 sessions (multi questions span 3 of them)")
    rng = random.Random(seed)
    b = _Builder(rng, sessions, planted=[[] for _ in range(sessions)])
    b.days = [date(2024, 1, 8)]
    while len(b.days) < sessions:
        b.days.append(b.days[-1] + timedelta(days=rng.randint(3, 11)))
    female, male = rng.sample(POOLS["female"], 6), rng.sample(POOLS["male"], 4)
    anyone = rng.sample([n for n in NAMES if n not in female + male], 8)
    roles = "kid mum grandma niece sister aunt son nephew brother uncle partner neighbour friend"
    roles += " cat dog mentor cousin best_friend"
    names = dict(zip(roles.split(), female + male + anyone, strict=True))
    b.persona = {role.replace("_", " "): name for role, name in names.items()}
    b.used |= set(names.values())
    b.projects = rng.sample(PROJECTS, 12)
    b.exact()
    b.paraphrase()
    b.multi()
    b.temporal()
    b.distractor()

    turns: list[Turn] = []
    ids: dict[int, str] = {}
    for s, planted in enumerate(b.planted, start=1):
        pairs: list[Pair | tuple[str, str]] = list(planted)
        pairs += [b.filler() for _ in range(max(0, turns_per_session // 2 - len(planted)))]
        rng.shuffle(pairs)
        if len(pairs) >= 4 and not isinstance(pairs[0][0], _Draft):
            pairs[0] = rng.choice(GREETINGS)
        if len(pairs) >= 4 and not isinstance(pairs[-1][0], _Draft) and rng.random() < 0.6:
            pairs[-1] = rng.choice(GOODBYES)
        for i, (role, draft) in enumerate(
            (
                (role, d)
                for pair in pairs
                for role, d in zip(("user", "assistant"), pair, strict=True)
            ),
            start=1,
        ):
            if isinstance(draft, _Draft):
                ids[draft.key] = f"s{s:02d}-t{i:02d}"
            text = draft.text if isinstance(draft, _Draft) else draft
            turns.append(Turn(f"s{s:02d}-t{i:02d}", s, role, text, b.days[s - 1].isoformat()))

    questions = [
        Question(f"q{i:03d}", text, tuple(ids[k] for k in keys), category)
        for i, (text, keys, category, _, _) in enumerate(b.asked, start=1)
    ]
    old = [tuple(ids[k] for k in a[4]) for a in b.asked]
    _check_invariants(turns, questions, [a[3] for a in b.asked], old)
    return RecallSet(turns, questions)


def _check_invariants(
    turns: list[Turn], questions: list[Question], tokens: list[str], old: list[tuple[str, ...]]
) -> None:
    by_id = {t.id: t for t in turns}
    for q, token, superseded in zip(questions, tokens, old, strict=True):
        word = re.compile(rf"\b{re.escape(token)}\b", re.IGNORECASE)
        holders = {t.id for t in turns if token and word.search(t.text)}
        support = " ".join(by_id[s].text for s in q.supporting)
        if q.category == "exact" and not (set(q.supporting) <= holders and len(holders) <= 2):
            raise RuntimeError(f"{q.id}: rare token {token!r} is in {sorted(holders)}")
        if q.category == "distractor" and len(holders - set(q.supporting)) < 6:
            raise RuntimeError(f"{q.id}: topic {token!r} is only in {len(holders)} turns")
        if q.category == "paraphrase" and content_overlap(q.text, support) > 1:
            raise RuntimeError(f"{q.id}: {q.text!r} shares content words with {support!r}")
        latest = by_id[q.supporting[0]].session
        if q.category == "temporal_update" and not (
            superseded and all(by_id[s].session < latest for s in superseded)
        ):
            raise RuntimeError(f"{q.id}: the support is not the latest of several statements")
        if q.category == "multi" and len({by_id[s].session for s in q.supporting}) < 2:
            raise RuntimeError(f"{q.id}: multi question within one session")


def self_check(rs: RecallSet) -> list[str]:
    """Every question has support, every support exists, ids are unique."""
    problems: list[str] = []
    ids = [t.id for t in rs.turns]
    if len(set(ids)) != len(ids):
        problems.append("duplicate turn ids")
    if len({q.id for q in rs.questions}) != len(rs.questions):
        problems.append("duplicate question ids")
    known = set(ids)
    for q in rs.questions:
        if not q.supporting:
            problems.append(f"{q.id} has no support")
        if not set(q.supporting) <= known:
            problems.append(f"{q.id} cites unknown turns {sorted(set(q.supporting) - known)}")
        if q.category not in CATEGORIES:
            problems.append(f"{q.id} has unknown category {q.category!r}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rs = build(args.seed)
    problems = self_check(rs)
    if build(args.seed) != rs:
        problems.append("two builds with the same seed differ")
    by_id = {t.id: t for t in rs.turns}
    roles = Counter(t.role for t in rs.turns)
    print(
        f"{len(rs.turns)} turns ({roles['user']} user, {roles['assistant']} assistant, "
        f"{len({t.text for t in rs.turns})} distinct) in {len({t.session for t in rs.turns})} "
        f"sessions, {rs.turns[0].day} to {rs.turns[-1].day}; {len(rs.questions)} questions"
    )
    print(f"  {'category':16} {'count':>5}  shared content words  assistant-supported")
    for category in CATEGORIES:
        qs = [q for q in rs.questions if q.category == category]
        shared = [
            content_overlap(q.text, " ".join(by_id[s].text for s in q.supporting)) for q in qs
        ]
        on_assistant = sum(any(by_id[s].role == "assistant" for s in q.supporting) for q in qs)
        print(f"  {category:16} {len(qs):5}  {sum(shared) / len(qs):20.2f}  {on_assistant:19}")
    print("\nexamples:")
    pick = random.Random(args.seed)
    for category in CATEGORIES:
        q = pick.choice([q for q in rs.questions if q.category == category])
        print(f"  [{category}] {q.id}: {q.text}")
        for s in q.supporting:
            print(f"      {s} ({by_id[s].role}, {by_id[s].day}): {by_id[s].text}")
    for problem in problems:
        print("FAIL:", problem)
    print("self-checks:", "FAIL" if problems else "ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
