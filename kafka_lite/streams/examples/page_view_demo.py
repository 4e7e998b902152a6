"""Page views on the DSL: views counted per page in one-minute windows; views joined with users' regions.

Mirrors: org.apache.kafka.streams.examples.pageview.PageViewTypedDemo
         (streams/examples/src/main/java/.../pageview/PageViewTypedDemo.java, Kafka 0.10.1)
Book:    chapter 9, 9.2.1 (a DSL application), 9.2.2 (KStream and KTable), 9.2.3 (joins),
         9.2.4 (windows)
Differs: Kafka's demo is one pipeline (join the views with the users' profiles, re-key by region,
         count in windows of seven days advancing by one second); here its two halves are two
         topologies, counting by page in tumbling windows and joining with a table of regions. A
         view is a record keyed by user whose value is the page, at the record's timestamp (the
         demo's values are JSON ``PageView`` objects with a timestamp extractor of their own), and a
         user's profile is just the region's name.
Labs:    lab 14, stages 2 and 3

Both read ``PAGE_VIEWS_TOPIC``, a *stream*: every view is a fact, none replaces another. The join
also reads ``USER_PROFILES_TOPIC`` as a *table*: a profile replaces the user's previous one, and a
null value (a tombstone) deletes it. The two topologies::

    page_view_counts:  views --group_by(page)--> <app>-ViewsPerPage-repartition --> count per page
                       and one-minute window (window store ViewsPerPage) --> to_stream
                       --> ({"page", "window_start"}, count) --> PAGE_VIEW_COUNTS_TOPIC

    page_views_by_region:  views --left_join(profiles table, store UserProfiles)-->
                           (user, {"page", "region"}) --> PAGE_VIEWS_BY_REGION_TOPIC

A windowed count is a table whose keys are ``Windowed(page, window)``: each view updates one row,
the one of its page and the window ``[start, start + WINDOW_SIZE_MS)`` holding its timestamp, and
the update goes downstream. A view may come late (its timestamp behind stream time): it still finds
its window while the window store keeps it, ``RETENTION_MS`` at least; after that the store has
dropped the window's segment, and the late view's count is lost.

A stream-table join is driven by the stream alone: each view looks its user up in the table *as
the table is when the view is processed*; a profile arriving or changing emits nothing and changes
only what later views find. The left join keeps a view whose user has no profile, with ``None`` for
the region (here ``UNKNOWN_REGION``); an inner join would drop it.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder
from kafka_lite.streams.kstream.windows import TimeWindows, Windowed
from kafka_lite.streams.serialization import Serdes
from kafka_lite.streams.state.key_value_store import KeyValue

PAGE_VIEWS_TOPIC = "streams-pageview-input"  # key: user, value: page
USER_PROFILES_TOPIC = "streams-userprofile-input"  # key: user, value: region (None: deleted)
PAGE_VIEW_COUNTS_TOPIC = "streams-pageviewcounts-output"
PAGE_VIEWS_BY_REGION_TOPIC = "streams-pageviewsbyregion-output"

VIEWS_PER_PAGE_STORE = "ViewsPerPage"
USER_PROFILES_STORE = "UserProfiles"
WINDOW_SIZE_MS = 60 * 1000  # tumbling windows of one minute
RETENTION_MS = 10 * 60 * 1000  # each window kept (at least) ten minutes for late views
UNKNOWN_REGION = "UNKNOWN"


# --8<-- [start:page_view_counts]
def page_view_counts(builder: KStreamBuilder) -> None:
    """Count the views of each page in tumbling windows of ``WINDOW_SIZE_MS``, kept ``RETENTION_MS``,
    in the window store ``VIEWS_PER_PAGE_STORE``; write each update of a count to
    ``PAGE_VIEW_COUNTS_TOPIC``, keyed by ``{"page": page, "window_start": start}`` (JSON) with the
    count as a long. The views are read with string keys and values."""
    # BEGIN SOLUTION
    views = builder.stream(PAGE_VIEWS_TOPIC, key_serde=Serdes.String(), value_serde=Serdes.String())
    counts = views.group_by(lambda user, page: page, Serdes.String(), Serdes.String()).count(
        VIEWS_PER_PAGE_STORE, TimeWindows.of(WINDOW_SIZE_MS).until(RETENTION_MS)
    )
    counts.to_stream().map(_by_page_and_window).to(
        PAGE_VIEW_COUNTS_TOPIC, key_serde=Serdes.Json(), value_serde=Serdes.Long()
    )
    # END SOLUTION


def _by_page_and_window(windowed_page: Windowed, count: int) -> KeyValue:
    """A window's count keyed by what a reader of the topic needs: the page and the window's start."""
    return KeyValue({"page": windowed_page.key, "window_start": windowed_page.window.start}, count)


# --8<-- [end:page_view_counts]


# --8<-- [start:page_views_by_region]
def page_views_by_region(builder: KStreamBuilder) -> None:
    """Join each view with its user's region, from the table of ``USER_PROFILES_TOPIC`` kept in the
    store ``USER_PROFILES_STORE``, keeping the views of users with no profile (region
    ``UNKNOWN_REGION``); write ``(user, {"page": page, "region": region})`` to
    ``PAGE_VIEWS_BY_REGION_TOPIC`` (string keys, JSON values). Both topics are read with string keys
    and values."""
    # BEGIN SOLUTION
    views = builder.stream(PAGE_VIEWS_TOPIC, key_serde=Serdes.String(), value_serde=Serdes.String())
    regions = builder.table(
        USER_PROFILES_TOPIC, USER_PROFILES_STORE, key_serde=Serdes.String(), value_serde=Serdes.String()
    )
    views.left_join(regions, _view_with_region).to(
        PAGE_VIEWS_BY_REGION_TOPIC, key_serde=Serdes.String(), value_serde=Serdes.Json()
    )
    # END SOLUTION


def _view_with_region(page: str, region: Any) -> dict[str, str]:
    """The joiner (Kafka's ``ValueJoiner``): the view's page and the region found, if any."""
    return {"page": page, "region": UNKNOWN_REGION if region is None else region}


# --8<-- [end:page_views_by_region]
