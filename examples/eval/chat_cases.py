# ruff: noqa: E501  (hand-written case text reads best one message a line)
"""Hand-written chat cases: assistants that must remember what the user said earlier."""

from __future__ import annotations

from typing import Any

from _dsl import chat, gold

SYSTEM = "You are a helpful, concise assistant. Use what the user told you earlier in the conversation."

CASES: list[dict[str, Any]] = [
    chat(
        "chat-dinner-allergy",
        ["chat", "constraint"],
        "Which dessert should I make for Saturday?",
        [
            ("system", SYSTEM),
            (
                "user",
                gold(
                    "I'm hosting six people on Saturday. One guest, my sister-in-law, has a severe tree-nut allergy, so nothing with almonds, walnuts, pecans or cashews, not even traces."
                ),
            ),
            (
                "assistant",
                "Noted: six guests on Saturday and a strict tree-nut-free menu. Do you want a full menu or help with particular courses?",
            ),
            (
                "user",
                "Let's start with the main. I was thinking of something Italian that I can prepare ahead.",
            ),
            (
                "assistant",
                "A baked lasagna works well: assemble it Friday evening, refrigerate, and bake for 45 minutes before guests arrive. A classic ragù with beef and pork, béchamel and parmesan is nut-free as long as you skip pesto. Serve it with a green salad dressed in lemon and olive oil.",
            ),
            ("user", "Great. How much lasagna do I need for six adults with big appetites?"),
            (
                "assistant",
                "A 23 x 33 cm dish with four layers feeds eight normal portions, so it covers six hungry adults. Plan on roughly 700 g of ragù meat and 500 g of fresh lasagna sheets.",
            ),
            ("user", "What wine goes with that? Nothing too expensive, under 20 euros a bottle."),
            (
                "assistant",
                "A Chianti Classico or a Montepulciano d'Abruzzo both pair well with ragù and are easy to find under 20 euros. Two bottles for six people is usually enough with dinner.",
            ),
            ("user", "Also, I only have one oven and it is small, about 50 litres."),
            (
                "assistant",
                "Then bake the lasagna first and keep it covered with foil; it holds its heat for 30 minutes, which frees the oven for anything else.",
            ),
            ("user", "What should I make for dessert that is easy?"),
        ],
    ),
    chat(
        "chat-moving-date-corrected",
        ["chat", "correction"],
        "When should the movers come?",
        [
            ("system", SYSTEM),
            ("user", "I'm moving flats in Berlin next month and need a checklist."),
            (
                "assistant",
                "Happy to help. The key steps in Berlin are: register your new address (Anmeldung) within 14 days of moving, arrange the handover appointment with both landlords, book movers, and transfer internet and electricity contracts.",
            ),
            ("user", "The handover of the new flat is on the 12th of March."),
            (
                "assistant",
                "Then plan the move on or right after 12 March. Book the Anmeldung appointment early; Bürgeramt slots often go three weeks in advance.",
            ),
            ("user", "How do I transfer my internet contract?"),
            (
                "assistant",
                "Call or write to your provider with the new address and the move date. In Germany they must keep serving you at the new address if they can; if not, you have a special right to cancel with one month's notice.",
            ),
            (
                "user",
                gold(
                    "Update: the landlord just emailed, the handover moved to the 19th of March because the painters are late."
                ),
            ),
            (
                "assistant",
                gold(
                    "Understood, the new handover date is 19 March. Shift the movers and the electricity meter reading to that day."
                ),
            ),
            ("user", "What do I need for the Anmeldung?"),
            (
                "assistant",
                "Your passport or ID card, the completed registration form, and the Wohnungsgeberbestätigung, the confirmation signed by your new landlord.",
            ),
            ("user", "OK. When should I book the movers for?"),
        ],
    ),
    chat(
        "chat-running-plan",
        ["chat", "constraint"],
        "Make my week-three running plan.",
        [
            ("system", SYSTEM),
            (
                "user",
                gold(
                    "I want to run a half marathon in October. Constraint: I can only train on Tuesday, Thursday and Sunday, and my knee physio said no more than 15 km in any single run until September."
                ),
            ),
            (
                "assistant",
                "Got it: three runs a week (Tuesday, Thursday, Sunday), with a 15 km cap per run until September.",
            ),
            ("user", "What pace should my easy runs be?"),
            (
                "assistant",
                "Easy runs should feel conversational, typically 60 to 90 seconds per kilometre slower than your goal half-marathon pace. If your goal is 2:00, that's about 5:40 per km race pace, so easy runs around 6:40 to 7:10 per km.",
            ),
            ("user", "My goal is 1:55, actually."),
            (
                "assistant",
                gold(
                    "For 1:55 the race pace is about 5:27 per km, so easy runs land around 6:30 to 6:55 per km and tempo runs around 5:10 to 5:20."
                ),
            ),
            ("user", "Should I do strength training too?"),
            (
                "assistant",
                "Yes, two short sessions a week help, especially for the knee: split squats, step-downs, calf raises and glute bridges. Put them after the Tuesday and Thursday runs so Sunday's long run stays fresh.",
            ),
            ("user", "Which shoes are good for a beginner?"),
            (
                "assistant",
                "Pick a neutral daily trainer with moderate cushioning and try several in a running shop; fit matters more than the brand.",
            ),
            ("user", "Now give me the plan for week three, please."),
        ],
    ),
    chat(
        "chat-budget-laptop",
        ["chat", "constraint", "correction"],
        "Which laptop do you recommend?",
        [
            ("system", SYSTEM),
            ("user", "I need a new laptop for university, I'll study architecture."),
            (
                "assistant",
                "Architecture usually means CAD and 3D modelling (Rhino, Revit, SketchUp) plus the Adobe suite, so a dedicated GPU and 16 GB or more of RAM matter. Do you have a budget?",
            ),
            ("user", "Around 1,200 euros."),
            ("assistant", "At about 1,200 euros you can get a 16 GB machine with an RTX 4050 class GPU."),
            ("user", "Does Revit run on a Mac?"),
            (
                "assistant",
                gold(
                    "No. Revit is Windows-only; on a Mac you would need a Windows virtual machine or a remote desktop, which is slow for 3D work. That rules out a MacBook if your courses use Revit."
                ),
            ),
            ("user", gold("My course list says Revit is mandatory in year one.")),
            ("assistant", "Then a Windows laptop is the safe choice."),
            ("user", gold("Also my parents will add 300 euros, so the budget is 1,500 now.")),
            ("assistant", "With 1,500 euros you can step up to an RTX 4060 and a better display."),
            ("user", "How heavy are these laptops usually?"),
            (
                "assistant",
                "Gaming-class 15 to 16 inch laptops weigh 2.0 to 2.5 kg; thinner creator models are closer to 1.8 kg.",
            ),
            ("user", "So, which laptop do you recommend?"),
        ],
    ),
    chat(
        "chat-tax-residency",
        ["chat", "fact"],
        "Do I need to file a tax return in Portugal for this year?",
        [
            ("system", SYSTEM),
            ("user", "I have questions about taxes after moving countries."),
            ("assistant", "Sure. Which countries, and when did you move?"),
            (
                "user",
                gold(
                    "I moved from Ireland to Lisbon on 1 July last year and have been living there since, working remotely for an Irish company."
                ),
            ),
            (
                "assistant",
                "Moving mid-year usually makes you a tax resident in Portugal from the day you arrive, if you stay more than 183 days in the following twelve months or have a habitual residence there.",
            ),
            ("user", "What's the NHR regime? A friend mentioned it."),
            (
                "assistant",
                "NHR, the Non-Habitual Resident regime, closed to new applicants in 2024 and was replaced by a narrower incentive for research and innovation jobs. Most remote workers no longer qualify.",
            ),
            ("user", "I also sold some shares this year."),
            (
                "assistant",
                "Capital gains on shares are generally taxed where you are resident when you sell them. In Portugal that's 28% flat, or you can opt to aggregate them with your other income.",
            ),
            (
                "user",
                gold(
                    "This year I've been in Portugal the whole year, except two weeks at Christmas in Dublin."
                ),
            ),
            ("assistant", "Then you are clearly Portuguese tax resident for this year."),
            ("user", "Thanks. Do I need to file a tax return in Portugal for this year?"),
        ],
    ),
    chat(
        "chat-wedding-speech",
        ["chat", "fact"],
        "Draft the opening of my best-man speech.",
        [
            ("system", SYSTEM),
            (
                "user",
                gold(
                    "I'm the best man at my brother Tomás's wedding. He's marrying Aiko; they met in 2017 at a climbing gym in Leeds when she caught his fall on the auto-belay that wasn't clipped in."
                ),
            ),
            (
                "assistant",
                "What a story to work with. How long should the speech be, and what tone do you want?",
            ),
            (
                "user",
                gold(
                    "About four minutes. Warm, a bit funny, nothing embarrassing about exes. Aiko's grandmother will be there and speaks only Japanese, so I'd like to open with one sentence in Japanese."
                ),
            ),
            (
                "assistant",
                "A Japanese welcome line is a lovely touch. Something like 'Minasama, honjitsu wa oisogashii naka o-atsumari itadaki arigatou gozaimasu' thanks everyone for coming on this day.",
            ),
            ("user", "What's a good structure for a speech?"),
            (
                "assistant",
                "A classic structure: a welcome and who you are, a story about the groom, how the couple met, what they're like together, a word for the bride, and a toast.",
            ),
            ("user", "Any tips for nerves?"),
            (
                "assistant",
                "Print it in a large font, practise out loud five times, and take one slow breath before you start. Nobody expects a professional.",
            ),
            ("user", "OK, draft the opening now."),
        ],
    ),
    chat(
        "chat-language-learning",
        ["chat", "preference"],
        "Recommend a podcast for my commute.",
        [
            ("system", SYSTEM),
            ("user", "I'm learning Spanish and want to practise more."),
            ("assistant", "Great. What's your level, and how much time do you have each day?"),
            (
                "user",
                gold(
                    "Around B1. I have a 35-minute train commute each way, and I prefer Latin American Spanish because my partner is from Colombia."
                ),
            ),
            (
                "assistant",
                "At B1 you can handle podcasts made for learners and some native content at normal speed.",
            ),
            ("user", "Should I do grammar drills too?"),
            (
                "assistant",
                "Some, but at B1 most progress comes from lots of input plus speaking. Ten minutes of targeted drills on the subjunctive and past tenses is plenty.",
            ),
            ("user", gold("I find podcasts with two hosts chatting much easier to follow than monologues.")),
            ("assistant", "That's common: conversation gives you more context and repetition."),
            ("user", "What apps are good for vocabulary?"),
            (
                "assistant",
                "Anki with a frequency deck is the most efficient; Duolingo is fine for habit but slow for vocabulary at your level.",
            ),
            ("user", "Recommend a podcast for my commute."),
        ],
    ),
    chat(
        "chat-recipe-scaling",
        ["chat", "fact"],
        "How much flour do I need now?",
        [
            ("system", SYSTEM),
            (
                "user",
                gold(
                    "Here's my grandmother's bread recipe: 500 g flour, 350 ml water, 10 g salt, 7 g dried yeast. It makes one loaf."
                ),
            ),
            ("assistant", "That's a 70% hydration dough, a nice everyday loaf."),
            ("user", "Why does my crust come out pale?"),
            (
                "assistant",
                "Usually the oven is not hot enough, or there is no steam early in the bake. Preheat to 240°C with a tray inside and pour boiling water into it when the loaf goes in.",
            ),
            ("user", "Can I use whole wheat flour?"),
            (
                "assistant",
                "Yes, but whole wheat absorbs more water. Replace up to half the flour and add about 20 ml more water.",
            ),
            ("user", gold("I want to bake three loaves for the school fair.")),
            (
                "assistant",
                "Three loaves means tripling everything; mix it in two batches if your bowl is small.",
            ),
            ("user", "How much flour do I need now?"),
        ],
    ),
    chat(
        "chat-insurance-claim",
        ["chat", "fact", "correction"],
        "Write the claim description for the insurer.",
        [
            ("system", SYSTEM),
            ("user", "My bike was stolen and I need to file an insurance claim."),
            (
                "assistant",
                "Sorry to hear that. You'll usually need the police report number, proof of ownership and a description of what happened.",
            ),
            (
                "user",
                gold(
                    "It was taken from the locked bike room in our building at Lindenstraße 14 sometime between Sunday night 22:00 and Monday 07:30."
                ),
            ),
            ("assistant", "Did you report it to the police?"),
            ("user", gold("Yes, report number 2024-118-4471 at the Kreuzberg station.")),
            ("assistant", "Good. Do you have the receipt?"),
            ("user", "I think it was a Cube Nature, bought for 899 euros."),
            (
                "assistant",
                "Insurers usually reimburse the replacement value minus depreciation unless you have new-value cover.",
            ),
            (
                "user",
                gold(
                    "Sorry, correction: it's a Cube Kathmandu Hybrid, an e-bike, bought in 2022 for 2,499 euros. I found the invoice."
                ),
            ),
            (
                "assistant",
                "Thanks, that's an important difference: many household policies cap e-bikes or need them listed separately, so check your policy's bicycle clause.",
            ),
            ("user", "Please write the claim description for the insurer."),
        ],
    ),
    chat(
        "chat-book-club",
        ["chat", "preference"],
        "Which book should our club read next?",
        [
            ("system", SYSTEM),
            ("user", "I run a small book club and we need our next pick."),
            (
                "assistant",
                "Fun! Tell me about the group: what have you read recently and what did people enjoy?",
            ),
            (
                "user",
                gold(
                    "We loved 'Klara and the Sun' and 'Piranesi', and hated 'Ulysses'; nobody finished it. We want something under 350 pages."
                ),
            ),
            ("assistant", "So literary but readable, a touch of the speculative, and not too long."),
            ("user", "How do you run a good discussion?"),
            (
                "assistant",
                "Prepare five open questions, start with first impressions, and let someone pick a favourite passage to read aloud.",
            ),
            (
                "user",
                gold("Oh, and two members only read on e-readers, so it has to be available as an ebook."),
            ),
            ("assistant", "Noted."),
            ("user", "Any snacks ideas for the meeting?"),
            (
                "assistant",
                "Something themed is fun: if the book is set somewhere specific, bring a snack from there.",
            ),
            ("user", "Which book should we read next?"),
        ],
    ),
    chat(
        "chat-garden-planning",
        ["chat", "constraint"],
        "What should I plant along the north fence?",
        [
            ("system", SYSTEM),
            (
                "user",
                gold(
                    "Our garden is in Edinburgh, the soil is heavy clay, and the strip along the north fence only gets about two hours of sun in the morning."
                ),
            ),
            (
                "assistant",
                "Clay in a cool climate with little sun narrows things down to shade-tolerant plants that cope with wet feet in winter.",
            ),
            ("user", "When should I plant spring bulbs?"),
            (
                "assistant",
                "Plant daffodils and crocuses in September or October and tulips in November, about three times as deep as the bulb is tall.",
            ),
            ("user", "How do I improve clay soil?"),
            (
                "assistant",
                "Dig in plenty of organic matter, such as garden compost or well-rotted manure, every autumn and avoid walking on it when it's wet.",
            ),
            ("user", gold("We have a dog that chews everything, so nothing toxic to dogs, please.")),
            ("assistant", "Understood, dog-safe plants only."),
            ("user", "What vegetables grow well in Scotland?"),
            (
                "assistant",
                "Potatoes, kale, leeks, broad beans, peas and most root vegetables do well in Scotland's cool summers.",
            ),
            ("user", "What should I plant along the north fence?"),
        ],
    ),
    chat(
        "chat-apartment-search",
        ["chat", "constraint", "correction"],
        "Which of the two flats fits us better?",
        [
            ("system", SYSTEM),
            (
                "user",
                gold(
                    "We're looking for a flat in Vienna: two bedrooms, max 1,600 euros warm, and within 30 minutes of the AKH hospital by public transport because my wife works night shifts there."
                ),
            ),
            ("assistant", "Clear criteria. Districts 9, 18, 17 and 19 are closest to the AKH."),
            ("user", "What's the difference between warm and cold rent?"),
            (
                "assistant",
                "Cold rent (Nettomiete) is the base rent; warm rent adds running costs and heating. Always compare warm rents.",
            ),
            (
                "user",
                gold(
                    "Flat A: 1,540 euros warm, 3rd district, two bedrooms, 42 minutes to the AKH including a change at Schwedenplatz."
                ),
            ),
            ("assistant", "Flat A fits the budget but exceeds the 30-minute commute."),
            (
                "user",
                gold(
                    "Flat B: 1,450 cold, 18th district, two bedrooms, 14 minutes to the AKH by tram 40 and U6. Running costs and heating are about 260 a month."
                ),
            ),
            ("assistant", "Flat B is close to the hospital; its warm rent would be about 1,710 euros."),
            ("user", "Do we need a broker in Vienna?"),
            (
                "assistant",
                "Since July 2023 the party who commissions the broker pays, so tenants rarely pay commission for ordinary listings.",
            ),
            (
                "user",
                gold(
                    "Update: the landlord of flat B will drop the cold rent to 1,320 if we sign a five-year lease."
                ),
            ),
            ("assistant", "That brings flat B to roughly 1,580 euros warm."),
            ("user", "Which of the two flats fits us better?"),
        ],
    ),
]
