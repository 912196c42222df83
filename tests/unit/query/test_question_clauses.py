"""The events a question describes, one clause each, and what it asks of them."""

from __future__ import annotations

import pytest

from tasks.query.question_clauses import question_clauses, read_shape


def test_a_progression_question_lists_each_described_event():
    shape = read_shape(
        "What pivotal event sets off the chain of actions leading to Chev's desperate escape through the "
        "mall, his call with Doc Miles, and the cab theft?"
    )
    assert shape.kind == "progression" and shape.direction == "before"
    assert any("escape through the mall" in c for c in shape.clauses)
    assert any("call with Doc Miles" in c for c in shape.clauses)
    assert any("cab theft" in c for c in shape.clauses)
    assert not any(c.lower().startswith("what") for c in shape.clauses)


@pytest.mark.parametrize(
    "question, kind, direction",
    [
        ("What occurs just before Stew faces mockery and turns to Gallagher for support?", "order", "before"),
        ("What does Nia do right after Daniel leaves the office?", "order", "after"),
        ("在“幺鸡与陈末在地铁上谈论爱情”之前，幺鸡先采取了什么关键行动？", "order", "before"),
        ("哪一个事件成为触发大王洞察祥太子隐忍、杰王子安抚王后的关键转折？", "progression", "before"),
        # Progression wordings the corpus uses that were read as local, order or arc questions.
        (
            "What event sets in motion Bourne's pursuit of Desh through the streets of Tangier?",
            "progression",
            "before",
        ),
        (
            "What event sets the story in motion toward Scotty's challenges on the field?",
            "progression",
            "before",
        ),
        ("Which event paved the way for Janet's mandate over the class?", "progression", "before"),
        ("哪一个事件为后续军装冲突、何小萍受辱及众人反应的发展埋下结构性伏笔？", "progression", "before"),
        (
            "哪个事件为后续燕子观察余国伟修理钟表以及两人在雨夜共舞相拥的发展奠定了关键基础？",
            "progression",
            "before",
        ),
        ("What motivates Queenie to hide the baby under the stairs?", "cause", "before"),
        ("从食堂众人调侃刘峰，到书店中刘峰被警察推搡，郝淑雯对他保持着怎样的态度？", "arc", ""),
        ("Which scenes show Sister Abigail and Yolanda together?", "local", ""),
    ],
)
def test_the_shape_follows_the_question_form(question, kind, direction):
    shape = read_shape(question)
    assert (shape.kind, shape.direction) == (kind, direction)


@pytest.mark.parametrize(
    "question",
    [
        "What action initiates Maya's entry into the embassy in the lobby scene?",
        "在艾迪生获胜后马小登台挑衅吴良这场戏中，哪个动作最直接引发了现场气氛的转变？",
    ],
)
def test_what_sets_something_off_inside_the_scene_it_names_is_no_progression(question):
    # The gold is that one scene: no walk or chain across the story, the text channel's budget intact.
    assert read_shape(question).kind != "progression"
    without_the_scene = question.replace(" in the lobby scene", "").replace("这场戏中", "时")
    assert read_shape(without_the_scene).kind == "progression"


def test_a_quoted_event_is_one_clause_and_its_parts_are_not_repeated():
    clauses = question_clauses("在“幺鸡与陈末在地铁上谈论爱情”之前，幺鸡先采取了什么关键行动？")
    assert clauses[0] == "幺鸡与陈末在地铁上谈论爱情"
    assert len(clauses) == len(set(clauses))


def test_a_scene_the_question_names_is_not_a_clause():
    clauses = question_clauses(
        "In 10、INT. BOWLING ALLEY - NIGHT, what made Bobby mutter and get up after Elton bowled a strike?"
    )
    assert not any("BOWLING" in c for c in clauses)
    assert any("Elton bowled a strike" in c for c in clauses)


def test_short_fragments_are_not_clauses():
    assert question_clauses("Who is he?") == ()
    assert len(question_clauses("A, b, c, d, e, f, g, h, i " * 3)) <= 4


def test_the_asked_part_of_an_order_question_is_not_a_described_event():
    # "Bourne do immediately" anchored as an event would start the walk anywhere in the story.
    shape = read_shape("What does Bourne do immediately before Desh takes the phone and moves out?")
    assert (shape.kind, shape.direction) == ("order", "before")
    assert shape.clauses == ("Desh takes the phone and moves out",)
    precedes = read_shape("Which scene immediately precedes the moment Snow White and William are separated?")
    assert (precedes.kind, precedes.direction) == ("order", "before")
    assert precedes.clauses == ("the moment Snow White and William are separated",)


def test_a_described_event_that_opens_the_question_stays_a_clause():
    clauses = question_clauses("By the time the crew departs for the operation, what has Sami already done?")
    assert "By the time the crew departs for the operation" in clauses


def test_a_bracketed_scene_heading_split_by_its_comma_is_not_a_clause():
    clauses = question_clauses(
        "In [49、INT HOSPITAL PHARMACY, MOMENTS LATER], what action by Chev immediately before the "
        "pharmacist refuses him creates trouble?"
    )
    assert clauses == ("the pharmacist refuses him creates trouble",)


def test_by_the_time_asks_for_anything_earlier_and_its_asked_part_is_no_anchor():
    shape = read_shape(
        "By the time Jim confronts Jerry outside the Whisky, what has already taken place in the studio?"
    )
    assert (shape.kind, shape.direction, shape.far) == ("order", "before", True)
    assert shape.clauses == ("By the time Jim confronts Jerry outside the Whisky",)
    assert not read_shape("What has Sami already done just before the crew departs?").far
    zh = read_shape("到了小武听胡梅梅唱歌时，此前在街头电话亭的对话里，她已先向小武提出了什么关键问题？")
    assert (zh.kind, zh.far, zh.clauses) == ("order", True, ("小武听胡梅梅唱歌时",))


def test_the_chinese_next_scene_templates_are_order_questions_without_their_asked_part():
    before = read_shape("在“玛多娜穿演出服亮相并宣布留下”之前，前面先发生了什么关键情节？")
    assert (before.kind, before.direction, before.far) == ("order", "before", False)
    assert before.clauses == ("玛多娜穿演出服亮相并宣布留下",)
    after = read_shape("“徐正太拿回BB机并招呼徐太浪”之后不久，紧接着发生了什么？")
    assert (after.kind, after.direction, after.clauses) == ("order", "after", ("徐正太拿回BB机并招呼徐太浪",))


def test_what_leads_or_explains_questions_ask_for_a_cause_before_the_described_event():
    shape = read_shape("What action by Thor directly leads Odin to conclude he is unfit to be king?")
    assert (shape.kind, shape.direction) == ("cause", "before")
    explained = read_shape("What moment in the alley explains Bobby's later physical advance on Rayette?")
    assert explained.kind == "cause"
    assert "Bobby's later physical advance on Rayette" in explained.clauses
    prior = read_shape("What event immediately prior to the detonation explains Bourne's presence with Desh?")
    assert (prior.kind, prior.direction) == ("order", "before")
    assert prior.clauses == ("Bourne's presence with Desh",)
