"""A small, self-made Creation-MMBench sample: 12 rows, 3 per category, same TSV layout.

Every row is written for judgekit (images drawn with Pillow, texts written by hand); none comes
from the real benchmark.  The rows exercise what the loader must handle: a list of three
images, an ``image`` pointer to another row, plain-string criteria without visual factuality
criteria, a ground truth, one PNG among JPEGs, and multi-line quoted fields.

    python -m judgekit.benchmarks.creation_mmbench.sample OUT.tsv [--seed N]
"""

from __future__ import annotations

import argparse
import base64
import csv
import io
import math
import random
from pathlib import Path
from typing import Callable

from PIL import Image, ImageDraw, ImageFont

from .prompts import compose_question
from .tasks import normalise_task, task_categories

__all__ = ["COLUMNS", "write_sample", "main"]

#: the real file's columns, in its order
COLUMNS = (
    "index", "question", "task_name", "role", "background", "instruction", "requirement",
    "ground_truth", "source", "criteria", "image_path", "reference_answer_by_gpt4o", "image",
)
_W, _H = 320, 240
_SOURCE = "judgekit synthetic sample (drawn with Pillow)"


def _font(size: int = 14) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow without FreeType
        return ImageFont.load_default()


def _canvas(bg: str) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    im = Image.new("RGB", (_W, _H), bg)
    return im, ImageDraw.Draw(im)


# --------------------------------------------------------------------------- drawings


def _landscape(rng: random.Random) -> Image.Image:
    im, d = _canvas("#8ec9f0")
    d.ellipse((230, 25, 285, 80), fill="#ffd23f")  # sun
    for _ in range(3):  # clouds
        x, y = rng.randint(20, 180), rng.randint(20, 70)
        d.ellipse((x, y, x + 50, y + 20), fill="white")
        d.ellipse((x + 20, y - 8, x + 60, y + 16), fill="white")
    d.ellipse((-80, 130, 200, 330), fill="#5a9e4b")  # far hill
    d.ellipse((120, 150, 420, 360), fill="#3f7f36")  # near hill
    d.rectangle((0, 215, _W, _H), fill="#2f6b8f")  # lake
    for x in (60, 85, 250):  # trees
        d.rectangle((x + 6, 170, x + 10, 190), fill="#5b3a1e")
        d.polygon([(x, 172), (x + 8, 145), (x + 16, 172)], fill="#1f4d1a")
    return im


def _kite_panel(step: int) -> Callable[[random.Random], Image.Image]:
    def draw(rng: random.Random) -> Image.Image:
        im, d = _canvas("#bfe3ff")
        d.rectangle((0, 190, _W, _H), fill="#7cc26b")
        d.rectangle((250, 110, 262, 190), fill="#6b4423")  # tree trunk
        d.ellipse((215, 60, 300, 130), fill="#2e8b3a")
        x = 70 + 50 * step  # the girl walks right
        d.ellipse((x - 8, 132, x + 8, 148), fill="#f1c27d")
        d.line((x, 148, x, 172), fill="black", width=3)
        d.line((x, 172, x - 8, 190), fill="black", width=3)
        d.line((x, 172, x + 8, 190), fill="black", width=3)
        d.line((x, 155, x + 12, 145), fill="black", width=3)
        kite = [(40, 170), (110, 60), (215, 78)][step]
        kx, ky = kite
        d.polygon([(kx, ky - 14), (kx + 10, ky), (kx, ky + 14), (kx - 10, ky)], fill="#e63946")
        d.line((x + 12, 145, kx, ky + 14), fill="#444444", width=1)
        d.text((8, 8), f"Panel {step + 1}", fill="black", font=_font(16))
        return im

    return draw


def _cafe(rng: random.Random) -> Image.Image:
    im, d = _canvas("#f4e3c9")
    d.rectangle((0, 170, _W, _H), fill="#a47148")  # floor
    d.rectangle((110, 140, 210, 150), fill="#5c3b1e")  # table
    d.rectangle((155, 150, 165, 200), fill="#5c3b1e")
    for cx, shirt in ((80, "#457b9d"), (240, "#e76f51")):
        d.ellipse((cx - 14, 70, cx + 14, 98), fill="#f1c27d")
        d.rectangle((cx - 18, 98, cx + 18, 150), fill=shirt)
    d.rectangle((128, 128, 140, 140), fill="white")  # cups
    d.rectangle((180, 128, 192, 140), fill="white")
    d.rectangle((120, 20, 200, 50), fill="#2b2d42")
    d.text((128, 26), "CAFE", fill="white", font=_font(18))
    return im


def _phone_ui(rng: random.Random) -> Image.Image:
    im, d = _canvas("#d9d9d9")
    d.rounded_rectangle((95, 5, 225, 235), radius=16, fill="#111111")
    d.rectangle((103, 20, 217, 220), fill="#f7f7f7")
    for i in range(3):  # app grid
        for j in range(2):
            d.rounded_rectangle((112 + 36 * i, 30 + 36 * j, 140 + 36 * i, 58 + 36 * j), radius=6, fill="#8ecae6")
    d.rounded_rectangle((108, 110, 212, 200), radius=8, fill="white", outline="#888888")
    f = _font(10)
    d.text((114, 116), "Unable to Delete", fill="black", font=f)
    d.text((114, 132), "\"PhotoMix\" is in use", fill="#333333", font=f)
    d.text((114, 146), "by a profile.", fill="#333333", font=f)
    d.line((108, 170, 212, 170), fill="#cccccc")
    d.text((122, 178), "OK", fill="#0a84ff", font=f)
    d.text((160, 178), "Settings", fill="#0a84ff", font=f)
    return im


def _run_poster(rng: random.Random) -> Image.Image:
    im, d = _canvas("#1d3557")
    d.text((20, 18), "Riverside 5K Fun Run", fill="#f1faee", font=_font(22))
    d.text((20, 55), "Saturday 14 June, 8:00 AM", fill="#a8dadc", font=_font(14))
    d.text((20, 80), "Finisher: Mia Chen  #218", fill="#f1faee", font=_font(14))
    d.text((20, 105), "Time 27:41   Place 34 / 260", fill="#ffd166", font=_font(14))
    d.rectangle((20, 140, 300, 146), fill="#e63946")
    for i in range(6):  # a row of runners as dots
        x = 40 + 45 * i + rng.randint(-4, 4)
        d.ellipse((x, 170, x + 14, 184), fill="#f1faee")
        d.line((x + 7, 184, x + 7, 210), fill="#f1faee", width=3)
    return im


def _bar_chart(rng: random.Random) -> Image.Image:
    im, d = _canvas("white")
    f = _font(12)
    d.text((60, 8), "Quarterly sales, thousand units", fill="black", font=f)
    d.line((40, 200, 300, 200), fill="black", width=2)
    d.line((40, 30, 40, 200), fill="black", width=2)
    values = (("Q1", 12), ("Q2", 18), ("Q3", 25), ("Q4", 31))
    for i, (q, v) in enumerate(values):
        x = 60 + 60 * i
        top = 200 - v * 5
        d.rectangle((x, top, x + 36, 200), fill=("#264653", "#2a9d8f", "#e9c46a", "#f4a261")[i])
        d.text((x + 10, top - 16), str(v), fill="black", font=f)
        d.text((x + 10, 206), q, fill="black", font=f)
    return im


def _menu(rng: random.Random) -> Image.Image:
    im, d = _canvas("#fffaf0")
    d.text((70, 10), "Green Bowl Cafe", fill="#2d6a4f", font=_font(22))
    items = (
        ("Quinoa salad with chickpeas", "420 kcal"),
        ("Grilled salmon, brown rice", "610 kcal"),
        ("Tofu stir-fry, vegetables", "480 kcal"),
        ("Beef burger with fries", "890 kcal"),
        ("Mango yoghurt smoothie", "260 kcal"),
    )
    f = _font(13)
    for i, (name, kcal) in enumerate(items):
        y = 52 + 34 * i
        d.text((16, y), name, fill="black", font=f)
        d.text((240, y), kcal, fill="#bc4749", font=f)
        d.line((16, y + 22, 304, y + 22), fill="#dddddd")
    return im


def _flowchart(rng: random.Random) -> Image.Image:
    im, d = _canvas("white")
    f = _font(11)

    def box(x0: int, y0: int, x1: int, y1: int, label: str) -> None:
        d.rectangle((x0, y0, x1, y1), outline="black", width=2)
        d.text((x0 + 6, y0 + 6), label, fill="black", font=f)

    d.ellipse((120, 6, 200, 30), outline="black", width=2)
    d.text((142, 11), "Start", fill="black", font=f)
    box(100, 45, 220, 72, "Enter user/password")
    d.polygon([(160, 88), (215, 112), (160, 136), (105, 112)], outline="black")
    d.text((138, 105), "Valid?", fill="black", font=f)
    box(200, 165, 310, 192, "Show dashboard")
    box(10, 165, 120, 192, "Show error")
    d.line((160, 30, 160, 45), fill="black", width=2)
    d.line((160, 72, 160, 88), fill="black", width=2)
    d.line((215, 112, 255, 112, 255, 165), fill="black", width=2)
    d.text((222, 96), "yes", fill="black", font=f)
    d.line((105, 112, 65, 112, 65, 165), fill="black", width=2)
    d.text((78, 96), "no", fill="black", font=f)
    d.line((10, 178, 4, 178, 4, 58, 100, 58), fill="#888888", width=1)  # retry loop
    d.text((8, 200), "retry (max 3)", fill="#555555", font=_font(10))
    return im


def _report(rng: random.Random) -> Image.Image:
    im, d = _canvas("#fdfdfd")
    d.text((12, 8), "Lake Rowan Water Quality Report 2024", fill="black", font=_font(13))
    f = _font(10)
    lines = (
        "Nitrate rose from 1.2 to 2.9 mg/L (2019-2024).",
        "Main source: fertiliser run-off, north farms.",
        "Recommendation: 20 m buffer strips by 2026.",
    )
    for i, line in enumerate(lines):
        d.text((12, 32 + 15 * i), line, fill="#333333", font=f)
    d.line((30, 215, 300, 215), fill="black")
    d.line((30, 90, 30, 215), fill="black")
    pts = [(45 + 50 * i, 215 - int(v * 40)) for i, v in enumerate((1.2, 1.5, 1.9, 2.2, 2.6, 2.9))]
    d.line(pts, fill="#d62828", width=2)
    for i, (x, y) in enumerate(pts):
        d.ellipse((x - 3, y - 3, x + 3, y + 3), fill="#d62828")
        d.text((x - 10, 220), str(2019 + i), fill="black", font=_font(8))
    return im


def _ad_poster(rng: random.Random) -> Image.Image:
    im, d = _canvas("#ffb703")
    d.ellipse((40, 60, 160, 180), fill="#fb8500")  # an orange that is also the sun
    for k in range(12):
        a = k * math.pi / 6
        d.line((100 + 66 * math.cos(a), 120 + 66 * math.sin(a), 100 + 86 * math.cos(a), 120 + 86 * math.sin(a)),
               fill="#fb8500", width=4)
    d.rectangle((200, 70, 250, 190), fill="#023047")  # a can
    d.text((205, 120), "Orange", fill="white", font=_font(10))
    d.text((205, 134), "Fizz", fill="white", font=_font(10))
    d.text((20, 10), "Drink the Sun.", fill="#023047", font=_font(24))
    d.text((20, 205), "No added sugar. Just sunshine.", fill="#023047", font=_font(13))
    return im


def _city_map(rng: random.Random) -> Image.Image:
    im, d = _canvas("#eef3e2")
    d.rectangle((0, 150, _W, 185), fill="#8ecae6")  # river
    d.rectangle((150, 140, 170, 195), fill="#9c6644")  # old bridge
    d.line((0, 60, _W, 60), fill="#bbbbbb", width=6)
    d.line((90, 0, 90, 150), fill="#bbbbbb", width=6)
    f = _font(11)
    for (x, y, label, colour) in (
        (40, 30, "Hotel", "#e63946"),
        (200, 30, "City Museum", "#6a4c93"),
        (40, 100, "Rose Park", "#2a9d8f"),
        (175, 120, "Old Bridge", "#9c6644"),
        (220, 200, "Harbour Market", "#f4a261"),
    ):
        d.ellipse((x - 5, y - 5, x + 5, y + 5), fill=colour)
        d.text((x + 8, y - 7), label, fill="black", font=f)
    return im


# --------------------------------------------------------------------------- rows

_CRIT_SUBJ = "General Subjective Criteria"
_CRIT_VF = "Visual Factuality Criteria"


def _rows() -> list[dict[str, object]]:
    """The 12 rows; ``images`` names drawing functions (list = several images, str = pointer)."""
    return [
        dict(
            index="0", task_name="landscape_to_poem", drawings=[("0.jpg", _landscape)],
            role="a poet who writes short nature poems for a regional magazine.",
            background="The magazine's summer issue has the theme \"quiet places\".",
            instruction="write a poem inspired by this landscape",
            requirement="1. Write 12 to 16 lines in free verse.\n2. Mention at least three elements you can see in the picture.\n3. End on a calm, reflective image.",
            criteria={
                _CRIT_SUBJ: "1. Imagery: Is the language vivid and sensory?\n2. Form: Does the poem have 12-16 lines of free verse?\n3. Tone: Does it convey quietness and end reflectively?",
                _CRIT_VF: "1. Does the poem mention the sun in the upper right of the sky?\n2. Does it mention the green hills and the lake at the bottom?\n3. Does it avoid inventing people or buildings that are not in the picture?",
            },
            answer=(
                "Quiet Valley\n\nThe sun hangs low in the right-hand sky,\na yellow coin no one will spend.\n"
                "Small clouds drift over, white and unhurried,\nas if the wind had forgotten its errand.\n"
                "Two green hills lean into each other\nlike old friends sharing a bench,\n"
                "and three dark pines keep watch\nover the slope where the grass thins.\n"
                "Below, the lake lies still and blue,\nholding the whole afternoon in its hands.\n"
                "Nothing here is waiting for anything.\nI sit, and the valley lets me stay,\n"
                "until my breathing slows to match the water\nand the light goes gently out of the day."
            ),
        ),
        dict(
            index="1", task_name="story_continue",
            drawings=[("1_0.jpg", _kite_panel(0)), ("1_1.jpg", _kite_panel(1)), ("1_2.jpg", _kite_panel(2))],
            role="a children's picture-book author who continues stories from illustrated panels.",
            background="These are the first three panels of a picture book about a girl named Lily and her red kite.",
            instruction="continue the story after the third panel",
            requirement="1. Keep the story suitable for children aged 4 to 7.\n2. Continue naturally from what happens in the panels.\n3. Write about 150 words with a happy ending.",
            criteria={
                _CRIT_SUBJ: "1. Coherence: Does the continuation follow logically from the panels?\n2. Audience: Is the language simple and warm for young children?\n3. Ending: Is there a clear, happy resolution?",
                _CRIT_VF: "1. Does the story reflect that the kite starts on the ground, then flies, then ends up in the tree?\n2. Is the kite described as red?\n3. Is the tree on the right side of the scene acknowledged as the place the kite is caught?",
            },
            answer=(
                "Lily looked up at the big green tree. Her red kite was stuck high in its branches, "
                "and its tail fluttered like a little flag saying hello. \"Come down, kite!\" Lily called, "
                "but the kite only wiggled. She tugged the string gently, one, two, three times. Nothing. "
                "Lily sat on the grass and thought very hard. Then she had an idea. She walked slowly around "
                "the tree, letting the string follow her, so it could slide back along the branch the same way "
                "the kite had gone in. A little puff of wind came across the meadow. The leaves rustled, the "
                "branch bent, and with a soft whoosh the kite slipped free and danced into the sky again. "
                "Lily laughed and ran across the field, the red kite bobbing above her. \"Next time,\" she "
                "told it, \"we fly where there are no trees.\" The kite dipped once, as if it agreed."
            ),
        ),
        dict(
            index="2", task_name="daily_conversation_creation", drawings=[("2.jpg", _cafe)],
            role="a scriptwriter for a light-hearted web series about everyday life.",
            background="The episode shows two old school friends meeting again after ten years.",
            instruction="write the conversation between the two people in this picture",
            requirement="1. Write 10 to 14 lines of dialogue.\n2. Make each character's personality distinct.\n3. Include one small, funny misunderstanding.",
            criteria="1. Naturalness: Does the dialogue sound like real people talking?\n2. Characterisation: Are the two voices clearly different?\n3. Humour: Is there a small, good-natured misunderstanding that is resolved?\n4. Length: Are there 10-14 lines of dialogue?",
            answer=(
                "SAM: I almost didn't recognise you without the braces.\n"
                "JO: And I almost didn't recognise you with a coffee that isn't three sugars.\n"
                "SAM: I'm a grown-up now. Two sugars.\n"
                "JO: Ten years, Sam. What do you even do these days?\n"
                "SAM: I work with tables.\n"
                "JO: Oh! Carpentry? That's lovely, you always liked woodwork.\n"
                "SAM: Spreadsheets, Jo. Database tables.\n"
                "JO: So... no chairs?\n"
                "SAM: No chairs. Though I do sit on one all day.\n"
                "JO: Close enough. I'll still call you a carpenter.\n"
                "SAM: And you? Still painting?\n"
                "JO: Teaching it now. Thirty eight-year-olds and a lot of glitter.\n"
                "SAM: Sounds like you need this coffee more than I do.\n"
                "JO: Same time next week, carpenter?"
            ),
        ),
        dict(
            index="3", task_name="social_media_travel_content", drawings="0", image_path="0.jpg",
            role="a travel blogger who posts short, upbeat travel content on Instagram.",
            background="You spent a weekend hiking in a lake valley away from the city.",
            instruction="write an Instagram post with this photo",
            requirement="1. Keep the caption under 120 words.\n2. Describe the scenery from the photo.\n3. Add 4 to 6 relevant hashtags.",
            criteria={
                _CRIT_SUBJ: "1. Engagement: Is the caption lively and inviting?\n2. Format: Is it under 120 words with 4-6 hashtags?\n3. Authenticity: Does it feel like a personal weekend experience?",
                _CRIT_VF: "1. Does the post describe hills, a lake and a sunny sky with a few clouds, as in the photo?\n2. Does it avoid describing snow, a beach or a city skyline, which are not in the photo?",
            },
            answer=(
                "Found my happy place this weekend. \u2600\ufe0f\n\n"
                "Two days, zero notifications, and this view: soft green hills rolling down to a still blue lake, "
                "a handful of lazy clouds and the sun doing its best golden-hour impression all afternoon. "
                "We hiked the ridge in the morning, ate sandwiches under the pines and did absolutely nothing "
                "by the water until the light faded. Sometimes the best adventure is a quiet one.\n\n"
                "Where do you go when you need to slow down? Tell me below \U0001f447\n\n"
                "#weekendescape #lakeviews #hikingadventures #slowtravel #greenhills"
            ),
        ),
        dict(
            index="4", task_name="daily_affairs_inquiries", drawings=[("4.jpg", _phone_ui)],
            role="an iPhone user who is not very technical and needs help from an online community.",
            background="You tried to delete an app you no longer use and this message appeared.",
            instruction="write a Reddit post asking for help with this problem",
            requirement="1. Give the post a short, clear title.\n2. Explain what you tried and what the screen shows.\n3. Add 2 or 3 tags.",
            criteria={
                _CRIT_SUBJ: "1. Clarity: Does the title summarise the problem?\n2. Detail: Does the body explain the steps already tried?\n3. Tone: Is it polite and easy to answer?",
                _CRIT_VF: "1. Does the post quote the message 'Unable to Delete' and that 'PhotoMix' is in use by a profile?\n2. Does it mention the two options shown, OK and Settings?",
            },
            answer=(
                "Title: Can't delete \"PhotoMix\" \u2013 says it's in use by a profile?\n\n"
                "Hi all, hoping someone can help a non-techy person. I'm trying to remove an app called PhotoMix "
                "that I haven't used in months. When I press and hold the icon and choose Delete App, a box pops "
                "up saying \"Unable to Delete\" and \"PhotoMix is in use by a profile.\" The only buttons are OK "
                "and Settings. Tapping OK just closes it, and in Settings I don't know what I'm looking for. "
                "I don't remember installing any profile. I've restarted the phone and updated iOS, same "
                "message. Is this something from my old job's email setup? Is it safe to remove the profile, "
                "and where do I find it? Thanks in advance!\n\nTags: #iPhone #iOS #HelpNeeded"
            ),
        ),
        dict(
            index="5", task_name="personal_event_summaries", drawings=[("5.jpg", _run_poster)],
            role="a first-time runner who keeps a personal blog about getting fit.",
            background="This is the finisher card you received at your first organised race.",
            instruction="write a short blog entry summarising the event",
            requirement="1. Write 120 to 180 words.\n2. Include the key facts of the race from the card.\n3. Share how you felt and what you want to do next.",
            criteria={
                _CRIT_SUBJ: "1. Structure: Does the entry have a clear beginning, middle and end?\n2. Reflection: Does it share feelings and a next goal?\n3. Length: Is it 120-180 words?",
                _CRIT_VF: "1. Does the entry give the event name (Riverside 5K Fun Run) and date (Saturday 14 June, 8:00 AM)?\n2. Does it give the finishing time 27:41 and the place 34 of 260?\n3. Does it use the bib number 218 or the name Mia Chen correctly if mentioned?",
            },
            answer=(
                "My First 5K: Riverside Fun Run\n\n"
                "On Saturday 14 June I lined up at 8:00 AM for the Riverside 5K Fun Run, bib number 218 pinned "
                "slightly crooked to my shirt. Six months ago I couldn't run for two minutes without stopping, "
                "so standing among 260 runners felt unreal. The first kilometre was too fast, of course. By the "
                "third I had found a rhythm next to a man pushing a stroller, and we kept each other going. "
                "The final stretch along the river was the best part: people clapping, music playing, my legs "
                "somehow still moving. I crossed the line in 27:41, 34th out of 260, which is far better than "
                "the 30 minutes I had hoped for. I felt proud, tired and a little emotional. Next goal: a 10K "
                "in the autumn, and maybe getting that bib on straight."
            ),
        ),
        dict(
            index="6", task_name="product_marketing_strategy", drawings=[("6.jpg", _bar_chart)],
            role="a marketing consultant for a small consumer-electronics company.",
            background="The chart shows last year's sales of the company's wireless earbuds. Next year's budget is fixed.",
            instruction="propose a marketing strategy for next year based on this chart",
            requirement="1. Interpret the sales trend first.\n2. Propose three concrete actions.\n3. Keep it under 200 words.",
            criteria={
                _CRIT_SUBJ: "1. Insight: Is the trend interpreted sensibly?\n2. Actionability: Are the three actions specific and feasible on a fixed budget?\n3. Concision: Is it under 200 words?",
                _CRIT_VF: "1. Does the answer read the values 12, 18, 25 and 31 thousand units for Q1-Q4?\n2. Does it describe the trend as steady growth each quarter?",
            },
            answer=(
                "Trend: sales grew every quarter, from 12k units in Q1 to 18k, 25k and 31k in Q4, roughly "
                "2.6 times the first quarter. Growth is steady rather than a single holiday spike, which "
                "suggests word of mouth is working and the product has found its audience.\n\n"
                "Strategy for next year (fixed budget):\n"
                "1. Protect momentum early: move 30% of spend into Q1, historically the weakest quarter, with "
                "a referral offer for existing buyers (a free case for every friend who buys).\n"
                "2. Turn buyers into reviewers: email Q3-Q4 customers for reviews and short videos; feature "
                "them on product pages and in ads, which costs little but converts well.\n"
                "3. Test before scaling: run small monthly A/B tests on two channels (short-video ads versus "
                "podcast sponsorships) and shift budget each quarter to the one with the lower cost per sale.\n\n"
                "Track units per quarter against a target of 20% growth over last year."
            ),
        ),
        dict(
            index="7", task_name="nutritional_formulation_of_recipe", drawings=[("7.png", _menu)],
            role="a registered dietitian advising office workers.",
            background="A client who wants to lose weight slowly eats lunch at this cafe every weekday.",
            instruction="recommend a weekly lunch plan from this menu",
            requirement="1. Plan five weekday lunches using only dishes on the menu.\n2. Keep each lunch under 650 kcal.\n3. Explain the nutritional reasoning briefly.",
            criteria={
                _CRIT_SUBJ: "1. Soundness: Is the nutritional reasoning correct and balanced?\n2. Practicality: Is the plan varied and easy to follow?\n3. Compliance: Are all lunches under 650 kcal?",
                _CRIT_VF: "1. Are only dishes from the menu used (quinoa salad, salmon with brown rice, tofu stir-fry, beef burger, mango smoothie)?\n2. Are the calorie values read correctly (420, 610, 480, 890, 260 kcal)?\n3. Is the 890 kcal burger left out or flagged as over the limit?",
            },
            answer=(
                "Weekly lunch plan (every lunch under 650 kcal):\n"
                "Monday: quinoa salad with chickpeas, 420 kcal.\n"
                "Tuesday: grilled salmon with brown rice, 610 kcal.\n"
                "Wednesday: tofu stir-fry with vegetables, 480 kcal.\n"
                "Thursday: quinoa salad with chickpeas, 420 kcal.\n"
                "Friday: grilled salmon with brown rice, 610 kcal.\n\n"
                "Reasoning: the beef burger with fries (890 kcal) is well over the limit and high in saturated "
                "fat, so it is left out. The plan alternates plant protein (chickpeas, tofu) with oily fish "
                "twice a week for omega-3 fats, and every lunch has a wholegrain or vegetable base for fibre, "
                "which keeps the client full through the afternoon. The mango yoghurt smoothie (260 kcal) "
                "would push the salad lunches to 680 kcal, so keep it as an occasional mid-afternoon snack "
                "on the tofu day instead of adding it to lunch. A steady deficit of this size supports slow, "
                "sustainable weight loss."
            ),
        ),
        dict(
            index="8", task_name="software_engineering_diagram_explanation", drawings=[("8.jpg", _flowchart)],
            role="an experienced software engineer writing onboarding documents for new team members.",
            background="New developers need to understand the login flow before working on the authentication service.",
            instruction="write a short document explaining this diagram",
            requirement="1. Name the type of diagram and its purpose.\n2. Explain each step and branch in order.\n3. Point out one possible improvement.",
            ground_truth="The diagram is a flowchart of a login process: Start, the user enters a user name and password, a decision checks whether the credentials are valid; if yes the dashboard is shown, if no an error is shown and the user can retry, at most three times.",
            criteria={
                _CRIT_SUBJ: "1. Clarity: Is the explanation easy for a new developer to follow?\n2. Completeness: Are the type, purpose, steps and branches all covered?\n3. Insight: Is the suggested improvement sensible?",
                _CRIT_VF: "1. Is the diagram identified as a flowchart of a login process?\n2. Are the steps read correctly: Start, enter user/password, the 'Valid?' decision, 'Show dashboard' on yes and 'Show error' on no?\n3. Is the retry loop with a maximum of 3 attempts mentioned?",
            },
            answer=(
                "Login flow: onboarding note\n\n"
                "Type and purpose: this is a flowchart. It shows the control flow of our login process, so you "
                "can see every path a user can take from opening the app to reaching the dashboard.\n\n"
                "Steps: the flow starts at Start. The user enters a user name and password. The decision "
                "diamond 'Valid?' checks the credentials against the authentication service. On 'yes' the "
                "flow goes right to 'Show dashboard' and ends there. On 'no' it goes left to 'Show error', "
                "and the thin line back to the input box is the retry loop, allowed at most three times.\n\n"
                "Improvement: the diagram does not say what happens after the third failed attempt. Add an "
                "explicit 'Lock account / show reset link' step so the behaviour is documented and tested."
            ),
        ),
        dict(
            index="9", task_name="document_understanding", drawings=[("9.jpg", _report)],
            role="an analyst at an environmental protection agency who condenses reports for decision makers.",
            background="Your director has two minutes to read about this report before a meeting with farmers.",
            instruction="summarise the report and its main evidence",
            requirement="1. Stay within 100 words.\n2. State the main conclusion first.\n3. Support it with numbers from the document.",
            criteria={
                _CRIT_SUBJ: "1. Concision: Is it within 100 words with the conclusion first?\n2. Usefulness: Would a director know what to say in the meeting?",
                _CRIT_VF: "1. Does the summary give the nitrate rise from 1.2 to 2.9 mg/L between 2019 and 2024?\n2. Does it name fertiliser run-off from the northern farms as the main source?\n3. Does it give the recommendation of 20 m buffer strips by 2026?",
            },
            answer=(
                "Conclusion: nitrate pollution in Lake Rowan is rising steadily and farming run-off is the main "
                "cause, so buffer strips are needed.\n\n"
                "Evidence: nitrate levels more than doubled from 1.2 mg/L in 2019 to 2.9 mg/L in 2024, rising "
                "every year on the chart. The report traces the main source to fertiliser run-off from the "
                "farms on the north shore. It recommends 20-metre vegetated buffer strips along those fields "
                "by 2026.\n\n"
                "For the meeting: present buffer strips as a shared fix with a clear deadline, not a penalty."
            ),
        ),
        dict(
            index="10", task_name="advertisement_explanation", drawings=[("10.jpg", _ad_poster)],
            role="a lecturer in advertising who explains campaigns to first-year students.",
            background="You use print adverts in class to show how images and slogans work together.",
            instruction="explain the creative idea behind this advertisement",
            requirement="1. Describe what the advert shows.\n2. Explain the visual metaphor and the slogan.\n3. Say who the target audience probably is.",
            criteria={
                _CRIT_SUBJ: "1. Depth: Is the metaphor explained, not only described?\n2. Teaching value: Is it clear and structured for students?\n3. Audience: Is the target audience argued from the advert?",
                _CRIT_VF: "1. Does the explanation note that the orange is drawn as a sun with rays?\n2. Does it quote the slogan 'Drink the Sun.' and the line 'No added sugar. Just sunshine.'?\n3. Does it mention the dark can labelled OrangeFizz?",
            },
            answer=(
                "What it shows: on a warm yellow background, a large orange with rays around it looks like a "
                "sun. Next to it stands a dark blue can labelled OrangeFizz. The headline reads \"Drink the "
                "Sun.\" and the footer says \"No added sugar. Just sunshine.\"\n\n"
                "The idea: the orange-as-sun is a visual metaphor. It claims the drink is as natural as "
                "sunlight: the fruit's energy comes from the sun, so drinking it is drinking the sun. The "
                "slogan says the same thing in three words, and the footer turns the metaphor into a product "
                "claim, no added sugar, so the sweetness is 'natural'.\n\n"
                "Audience: health-conscious young adults who want a soft drink without guilt; the bright, "
                "simple design suits shelves and social media alike."
            ),
        ),
        dict(
            index="11", task_name="travel_itinerary_planning_and_recommendations", drawings=[("11.jpg", _city_map)],
            role="a local tour guide who plans walking days for visitors.",
            background="A couple staying at the hotel on the map has one free day and does not like long walks.",
            instruction="plan a one-day walking itinerary using the places on this map",
            requirement="1. Start and end at the hotel.\n2. Visit at least four places on the map in a sensible order.\n3. Give approximate times and one tip per stop.",
            criteria={
                _CRIT_SUBJ: "1. Efficiency: Is the route order sensible with little backtracking?\n2. Comfort: Are there breaks and realistic times?\n3. Appeal: Are the tips useful and varied?",
                _CRIT_VF: "1. Does the plan use only places on the map: Hotel, City Museum, Rose Park, Old Bridge, Harbour Market?\n2. Does it respect the layout: the park near the hotel, the bridge crossing the river, the market south of the river?",
            },
            answer=(
                "One gentle day on foot\n\n"
                "9:00 Hotel. Leave after breakfast; it is a short, flat walk to the first stop.\n"
                "9:15 Rose Park, just south of the hotel. Tip: the benches by the rose beds get the morning sun.\n"
                "10:30 City Museum, along the main street to the east. Tip: go straight to the top floor and "
                "work down; the crowds arrive at noon.\n"
                "12:30 Old Bridge. Walk down to the river and cross the bridge slowly. Tip: the best photo of "
                "the water is from the middle.\n"
                "13:00 Harbour Market, on the far side of the river. Tip: have lunch at the stalls and buy "
                "fruit for the afternoon.\n"
                "15:00 Back across the bridge and up past the park to the Hotel for a rest, about 25 minutes "
                "at an easy pace."
            ),
        ),
    ]


def _category_of(task: str) -> str:
    return task_categories()[normalise_task(task)]


def _encode(im: Image.Image, name: str) -> str:
    buf = io.BytesIO()
    if name.endswith(".png"):
        im.save(buf, format="PNG", optimize=True)
    else:
        im.save(buf, format="JPEG", quality=70, optimize=True)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def write_sample(path: str | Path, seed: int = 0) -> Path:
    """Write the 12-row sample TSV to ``path`` (same columns and quoting as the real file)."""
    rng = random.Random(seed)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    records = []
    for row in _rows():
        drawings = row["drawings"]
        if isinstance(drawings, str):  # a pointer to another row's index
            image, image_path = drawings, str(row["image_path"])
        else:
            b64s = [_encode(draw(rng), name) for name, draw in drawings]
            names = [name for name, _ in drawings]
            image = b64s[0] if len(b64s) == 1 else repr(b64s)
            image_path = names[0] if len(names) == 1 else repr(names)
        criteria = row["criteria"]
        question = compose_question(
            role=str(row["role"]),
            background=str(row["background"]),
            instruction=str(row["instruction"]),
            requirement=str(row["requirement"]),
        )
        _category_of(str(row["task_name"]))  # every sample task must be in the table
        records.append(
            {
                "index": row["index"],
                "question": question,
                "task_name": row["task_name"],
                "role": row["role"],
                "background": row["background"],
                "instruction": row["instruction"],
                "requirement": row["requirement"],
                "ground_truth": row.get("ground_truth", ""),
                "source": _SOURCE,
                "criteria": criteria if isinstance(criteria, str) else repr(criteria),
                "image_path": image_path,
                "reference_answer_by_gpt4o": row["answer"],
                "image": image,
            }
        )
    with out.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", quotechar='"', quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        w.writerow(COLUMNS)
        for rec in records:
            w.writerow([rec[c] for c in COLUMNS])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m judgekit.benchmarks.creation_mmbench.sample",
        description="Write the 12-row synthetic Creation-MMBench sample TSV.",
    )
    ap.add_argument("out", help="where to write the .tsv")
    ap.add_argument("--seed", type=int, default=0, help="seed for the small random details of the drawings")
    args = ap.parse_args(argv)
    path = write_sample(args.out, seed=args.seed)
    print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
