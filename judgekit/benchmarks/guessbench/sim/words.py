"""The simulated GuessBench guesser's words: the concepts it names, the common nouns it builds
phrases from, and the words it describes builds with (:mod:`judgekit.benchmarks.guessbench.sim.guess`)."""

from __future__ import annotations

__all__ = ["VOCABULARY", "BY_SHAPE", "WORDS_BY_LEN", "FILLER_BY_LEN", "COLOURS", "BLOCKS", "BUILD_SHAPES", "shape"]

_VOCAB_TEXT = """
apple, banana, cherry, grapes, carrot, pumpkin, watermelon, pineapple, strawberry, lemon,
orange, pear, corn, potato, mushroom, broccoli, cake, cookie, pizza, burger, hot dog, ice cream,
donut, sandwich, taco, sushi, bread, cheese, egg, pancake, popcorn, candy cane, lollipop, cupcake,
chocolate, coffee, teapot, glass of milk, cup, bowl, fork, spoon, knife, plate, bottle, honey,
chair, rocking chair, table, bed, sofa, lamp, clock, television, computer, keyboard, phone,
camera, radio, piano, guitar, drum, violin, trumpet, bell, candle, mirror, window, door, ladder,
bucket, umbrella, book, pencil, scissors, backpack, fish tank, bathtub, toilet, fridge, oven,
washing machine, fireplace, vase, flower pot, picture frame, globe, trophy, crown, ring,
necklace, glasses, hat, shoe, boot, sock, shirt, dress, tie, glove, sword, shield, bow, arrow,
axe, hammer, pickaxe, shovel, anvil, cannon, bomb, rocket, magnet, key, lock, anchor, compass,
telescope, microscope, lantern, torch, house, castle, tower, lighthouse, windmill, barn, igloo,
pyramid, temple, church, bridge, tent, skyscraper, hospital, school, prison, fountain, well,
treehouse, statue, car, bus, train, truck, bicycle, motorcycle, boat, ship, submarine, airplane,
helicopter, hot air balloon, tractor, skateboard, sled, fire truck, ambulance, cat, dog, horse,
cow, pig, sheep, chicken, duck, rabbit, mouse, bear, panda, lion, tiger, elephant, giraffe,
zebra, monkey, snake, turtle, frog, fish, shark, whale, dolphin, octopus, crab, spider, bee,
butterfly, caterpillar, snail, ladybug, owl, penguin, parrot, eagle, bat, dragon, unicorn,
dinosaur, fox, wolf, deer, kangaroo, camel, hedgehog, squirrel, flamingo, jellyfish, starfish,
seahorse, tree, palm tree, flower, rose, sunflower, cactus, volcano, mountain, island,
waterfall, rainbow, cloud, sun, moon, star, lightning, snowflake, tornado, beach, river, cave,
snowman, scarecrow, robot, ghost, skeleton, zombie, pirate, wizard, witch, knight, king, queen,
princess, angel, mermaid, alien, ninja, astronaut, clown, cowboy, heart, smile, music note,
flag, map, treasure chest, gift, balloon, kite, christmas tree, santa claus, easter egg,
birthday cake, snow globe, chess, dice, puzzle, yo yo, top hat, bow tie, traffic light,
stop sign, mailbox, bench, swing, slide, sandcastle, campfire, nest, spider web, beehive,
windmill, water bottle, light bulb, paint brush, treasure map, ice cube, pirate ship, space ship,
bird house, dog house, cuckoo clock, alarm clock, frying pan, toaster, microwave, sink, shower,
rocking horse, fish bowl, apple pie, snow angel, water tower, sea shell, candy apple, bee hive,
armchair, dagger, tomato, rain cloud, fruit bowl, fire hydrant, hour glass, paper plane,
"""

#: more common nouns, for phrases built word by word to fit a hint (never whole guesses alone)
_FILLER_TEXT = """
box bag can jar pot pan mug hut den log rock pond lake hill road wall gate fence roof yard field
farm mill shed shop stall cart wagon raft canoe yacht kayak plane jet drone sail mast pole post
sign bulb wire pipe tube hose barrel crate shelf desk stool couch cabinet drawer closet curtain
carpet pillow blanket basket flask kettle ladle whisk grill stove tap tub brush comb towel soap
sponge broom rake hoe spade saw drill wrench bolt nail screw gear wheel spring chain rope net
hook trap cage coin gem pearl medal badge mask helmet armor cape cloak robe gown skirt jeans coat
vest belt purse wallet watch bracelet earring feather bone skull horn tusk claw paw tail wing
beak shell fin scale hive burrow seed bean pea nut acorn leaf vine root stem bush hedge moss reed
fern tulip daisy lily orchid cotton wheat grain rice pasta soup stew salad pie tart jam jelly
syrup sugar salt pepper garlic onion ginger melon peach plum mango kiwi lime olive peanut walnut
almond muffin bagel waffle toast cereal yogurt butter cream noodle dumpling crystal diamond
emerald ruby marble granite beacon turret dome arch column pillar tunnel canal harbor dock pier
wharf garage cellar attic balcony porch chimney staircase elevator escalator monument museum
library stadium theater palace cottage cabin mansion chapel shrine pagoda satellite planet comet
meteor galaxy nebula crater glacier iceberg canyon desert jungle swamp meadow prairie lagoon
geyser avalanche hurricane blizzard rainstorm sunrise sunset firework bonfire parade carnival
circus festival concert orchestra headphones microphone speaker projector calculator typewriter
telephone envelope newspaper magazine notebook calendar bookshelf paintbrush sculpture carousel
trampoline playground hopscotch giant tiny golden silver wooden stone magic royal happy angry
sleepy frozen flying broken little great old new big red blue green black white pink
"""

#: the simulated guesser's concepts, in a fixed order (duplicates removed)
VOCABULARY: tuple[str, ...] = tuple(dict.fromkeys(
    w.strip() for w in _VOCAB_TEXT.replace("\n", " ").split(",") if w.strip()
))


def shape(phrase: str) -> tuple[int, ...]:
    return tuple(len(w) for w in phrase.split())


BY_SHAPE: dict[tuple[int, ...], tuple[str, ...]] = {}
for _w in VOCABULARY:
    BY_SHAPE[shape(_w)] = BY_SHAPE.get(shape(_w), ()) + (_w,)


def _by_len(words: list[str]) -> dict[int, tuple[str, ...]]:
    out: dict[int, tuple[str, ...]] = {}
    for w in dict.fromkeys(words):
        out[len(w)] = out.get(len(w), ()) + (w,)
    return out


#: single words by length, for phrases built slot by slot: of the vocabulary and the filler
#: list, and of the filler list alone (what a guesser names when no concept comes to mind)
WORDS_BY_LEN = _by_len([t for p in VOCABULARY for t in p.split()] + _FILLER_TEXT.split())
FILLER_BY_LEN = _by_len(_FILLER_TEXT.split())

COLOURS = ("red", "orange", "yellow", "lime", "green", "blue", "light blue", "white", "black",
            "brown", "gray", "pink", "purple", "cyan")
BLOCKS = ("wool", "concrete", "terracotta", "oak planks", "stone bricks", "stained glass",
           "leaves", "quartz", "cobblestone", "sandstone", "spruce logs", "iron blocks", "fences",
           "stairs", "slabs", "glowstone")
BUILD_SHAPES = ("tall and narrow", "round with a flat base", "long and low to the ground",
           "roughly symmetrical", "wider at the top than at the bottom", "built around a hollow centre",
           "compact and boxy", "curved along one side")
