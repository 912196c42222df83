"""Summary hierarchy tables (whole-story questions): communities of the entity graph, how much each
sentence is worth quoting, and the summaries of episodes, storylines, the whole work and the
communities, each made of quotes that point back to their sentence, section, chunk and span.

Offline a summary is extractive: its `text` is its quotes joined in story order, and `rank` says in
which order they were chosen, so the first r by rank are the summary at a shorter length.
"""

from __future__ import annotations

from schemas.tables.spec import (
    BOOL,
    FLOAT,
    INT,
    REQUIRED,
    SPAN_INVARIANT,
    STR,
    STR_LIST,
    ForeignKey,
    TableSpec,
    columns,
    register,
    spec,
)

SUMMARY_LEVELS = ("episode", "storyline", "work", "community")
# A storyline summary carries its storyline's origin, declared once with the storylines table.
STORYLINE_ORIGINS = spec("storylines").accepted_values["origin"]

register(
    TableSpec(
        name="communities",
        grain="one row per community of the entity graph (Louvain over the relations, fixed seed)",
        key=("community_id",),
        fields=columns(
            ("community_id", STR, REQUIRED, "Community id (hash of its member entities)"),
            ("doc_id", STR, REQUIRED),
            ("ordinal", INT, REQUIRED, "Order by first appearance in the story, from 1"),
            ("name", STR, REQUIRED, "Its most mentioned members, named"),
            ("member_ids", STR_LIST, REQUIRED, "Member entities, most mentioned first; entities.entity_id"),
            (
                "key_member_ids",
                STR_LIST,
                REQUIRED,
                "The members the report is about (most mentioned, at most five); entities.entity_id",
            ),
            ("n_members", INT, REQUIRED, "Member entities"),
            ("n_mentions", INT, REQUIRED, "Grounded mentions of its members"),
            ("internal_weight", FLOAT, REQUIRED, "Summed weight of the relations inside the community"),
            ("section_ids", STR_LIST, REQUIRED),
            ("first_ordinal", INT, REQUIRED),
            ("last_ordinal", INT, REQUIRED),
            ("method", STR, REQUIRED),
        ),
        foreign_keys=(
            ForeignKey("member_ids", "entities", "entity_id", is_list=True),
            ForeignKey("key_member_ids", "entities", "entity_id", is_list=True),
            ForeignKey("section_ids", "sections", "section_id", is_list=True),
        ),
        invariants=(
            ("first ordinal not after last", "SELECT * FROM {t} WHERE first_ordinal > last_ordinal"),
            ("a community has two members or more", "SELECT * FROM {t} WHERE n_members < 2"),
            ("member count matches", "SELECT * FROM {t} WHERE len(member_ids) <> n_members"),
            (
                "an entity is in one community",
                "SELECT m FROM (SELECT unnest(member_ids) AS m FROM {t}) GROUP BY m HAVING count(*) > 1",
            ),
        ),
    )
)


register(
    TableSpec(
        name="sentence_salience",
        grain="one row per sentence: how much it is worth quoting in a summary, and why",
        key=("sentence_id",),
        fields=columns(
            ("sentence_id", STR, REQUIRED, "sentences.sentence_id"),
            ("doc_id", STR, REQUIRED),
            ("ordinal", INT, REQUIRED),
            (
                "episode_id",
                STR,
                "Episode whose units hold it or come nearest before it in its section; episodes.episode_id",
            ),
            (
                "centrality",
                FLOAT,
                REQUIRED,
                "Cosine similarity to the mean vector of the document's sentences",
            ),
            (
                "entity_weight",
                FLOAT,
                REQUIRED,
                "Grounded mentions of named entities, each weighted by log(1 + its mentions), capped",
            ),
            ("is_narrative", BOOL, REQUIRED, "The sentence grounds an event or interaction"),
            ("is_dialogue", BOOL, REQUIRED, "Spoken line (a speaker cue, or an opening quotation mark)"),
            (
                "is_front_matter",
                BOOL,
                REQUIRED,
                "Title page (title line, Markdown heading, byline), credits, transcriber's or copyright "
                "note: never quoted",
            ),
            ("n_words", INT, REQUIRED, "Words (English) or characters (Chinese)"),
            ("salience", FLOAT, REQUIRED, "Combined score; higher is more worth quoting"),
        ),
        foreign_keys=(
            ForeignKey("sentence_id", "sentences", "sentence_id", nullable=False),
            ForeignKey("episode_id", "episodes", "episode_id"),
        ),
    )
)


register(
    TableSpec(
        name="summaries",
        grain="one row per summary: of an episode, a storyline, the whole work or a community",
        key=("summary_id",),
        fields=columns(
            ("summary_id", STR, REQUIRED, "Summary id (hash of level, subject and quoted sentences)"),
            ("doc_id", STR, REQUIRED),
            ("level", STR, REQUIRED, "episode, storyline, work or community"),
            (
                "subject_id",
                STR,
                REQUIRED,
                "What it summarizes: episodes.episode_id, storylines.storyline_id, the doc_id, or "
                "communities.community_id",
            ),
            (
                "ordinal",
                INT,
                REQUIRED,
                "Story order within its level (storylines: trunk and branches "
                "as induce_storylines ordered them), from 1",
            ),
            ("origin", STR, "Storylines: trunk, branch, terminal or split"),
            ("title", STR, REQUIRED, "Episode title, storyline name, document title or community name"),
            (
                "text",
                STR,
                REQUIRED,
                "The quotes joined in story order, or (method 'llm') the sentences the model wrote from them",
            ),
            ("n_words", INT, REQUIRED, "Words (English) or characters (Chinese) of the text"),
            ("n_quotes", INT, REQUIRED, "Quotes in summary_quotes"),
            ("sentence_ids", STR_LIST, REQUIRED, "Quoted sentences in story order; sentences.sentence_id"),
            ("section_ids", STR_LIST, REQUIRED),
            ("first_ordinal", INT, REQUIRED),
            ("last_ordinal", INT, REQUIRED),
            ("method", STR, REQUIRED),
        ),
        accepted_values={"level": SUMMARY_LEVELS, "origin": STORYLINE_ORIGINS},
        foreign_keys=(
            ForeignKey("sentence_ids", "sentences", "sentence_id", is_list=True),
            ForeignKey("section_ids", "sections", "section_id", is_list=True),
        ),
        invariants=(
            ("first ordinal not after last", "SELECT * FROM {t} WHERE first_ordinal > last_ordinal"),
            ("a summary quotes something", "SELECT * FROM {t} WHERE n_quotes < 1"),
            ("quote count matches", "SELECT * FROM {t} WHERE len(sentence_ids) <> n_quotes"),
            ("one work summary", "SELECT count(*) FROM {t} WHERE level = 'work' HAVING count(*) > 1"),
            (
                "origin only on storylines",
                "SELECT * FROM {t} WHERE (origin IS NOT NULL) <> (level = 'storyline')",
            ),
        ),
    )
)


register(
    TableSpec(
        name="summary_quotes",
        grain="one row per quoted sentence of a summary",
        key=("summary_id", "position"),
        fields=columns(
            ("summary_id", STR, REQUIRED, "summaries.summary_id"),
            ("doc_id", STR, REQUIRED),
            ("position", INT, REQUIRED, "Place in the summary (story order), from 1"),
            (
                "rank",
                INT,
                REQUIRED,
                "Order in which the quote was chosen, from 1: the first r by rank make the summary at a "
                "shorter length",
            ),
            ("sentence_id", STR, REQUIRED, "sentences.sentence_id"),
            ("section_id", STR, REQUIRED),
            ("chunk_id", STR, REQUIRED),
            ("char_start", INT, REQUIRED),
            ("char_end", INT, REQUIRED),
            ("text", STR, REQUIRED, "The quoted sentence, as written"),
        ),
        foreign_keys=(
            ForeignKey("summary_id", "summaries", "summary_id", nullable=False),
            ForeignKey("sentence_id", "sentences", "sentence_id", nullable=False),
            ForeignKey("section_id", "sections", "section_id", nullable=False),
            ForeignKey("chunk_id", "chunks", "chunk_id", nullable=False),
        ),
        invariants=(
            SPAN_INVARIANT,
            (
                "quotes in story order",
                "SELECT * FROM (SELECT char_start, lag(char_start) OVER (PARTITION BY summary_id "
                "ORDER BY position) AS previous FROM {t}) WHERE previous >= char_start",
            ),
            (
                "ranks are 1..n within a summary",
                "SELECT summary_id FROM {t} GROUP BY summary_id "
                "HAVING min(rank) <> 1 OR max(rank) <> count(*) OR count(DISTINCT rank) <> count(*)",
            ),
        ),
    )
)


register(
    TableSpec(
        name="summary_claims",
        grain="one row per sentence a model wrote for a summary (none offline), with the quotes it rests on",
        key=("summary_id", "position"),
        fields=columns(
            ("summary_id", STR, REQUIRED, "summaries.summary_id"),
            ("doc_id", STR, REQUIRED),
            ("position", INT, REQUIRED, "Place of the sentence in the written summary, from 1"),
            ("text", STR, REQUIRED, "The written sentence"),
            (
                "sentence_ids",
                STR_LIST,
                REQUIRED,
                "The quoted sentences it rests on (quotes of the same summary); sentences.sentence_id",
            ),
            ("section_ids", STR_LIST, REQUIRED),
            ("method", STR, REQUIRED),
        ),
        foreign_keys=(
            ForeignKey("summary_id", "summaries", "summary_id", nullable=False),
            ForeignKey("sentence_ids", "sentences", "sentence_id", is_list=True),
            ForeignKey("section_ids", "sections", "section_id", is_list=True),
        ),
        invariants=(("a claim rests on a quote", "SELECT * FROM {t} WHERE len(sentence_ids) = 0"),),
    )
)
