"""Synthetic but realistic memory texts for the benchmarks (deterministic, written here).

Sentences are built from templates an agent's memory would hold (preferences, decisions,
incidents, plans, facts about people) with slot words drawn from Zipf-like vocabularies,
so a few terms are very common (tens of thousands of postings at 100k memories) and most
are rare, as in real text.
"""

import random

TEMPLATES = [
    "{person} prefers {thing} over {thing2} for {topic}",
    "We decided to move the {service} service to {tech} on {date}",
    "Incident {ticket}: {service} latency hit {num} ms at {time}; {cause}",
    "{person} asked the agent to remember that the {topic} meeting is on {day}",
    "Customer {company} reported that {feature} fails when {condition}",
    "The {team} team will ship {feature} in {month} after the {topic} review",
    "Reminder: {person} is allergic to {food} and likes {food2}",
    "User mentioned they are travelling to {city} next {day} for {topic}",
    "{person} said the {service} deploy needs approval from {person2}",
    "Decision: use {tech} for {topic}; {person} owns the rollout",
    "The agent learned that {company} renews their contract every {month}",
    "{person} wants weekly summaries of {topic} sent on {day} mornings",
    "Bug {ticket} in {feature}: {condition}, workaround is to restart {service}",
    "Meeting notes: {team} discussed {topic}, {feature} and the {service} budget",
    "{person} moved from the {team} team to the {team2} team in {month}",
]

WORDS = {
    "person": "Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia Peggy "
              "Rupert Sybil Trent Victor Walter Xavier Yolanda Zack Mei Arjun Sofia Tom Lena "
              "Omar Priya Chen Hiro Ana Lucas Emma Noah Liam Ava Mia Ethan Zoe".split(),
    "thing": "tea coffee tabs spaces vim emacs email slack dark-mode light-mode mornings "
             "evenings python rust go java typescript kotlin swift postgres mysql".split(),
    "topic": "billing onboarding security hiring roadmap pricing analytics search payments "
             "compliance infrastructure support marketing design research mobile api "
             "reliability performance accessibility localization documentation".split(),
    "service": "auth billing search gateway notifications ledger profile catalog checkout "
               "inventory reporting scheduler mailer exporter indexer".split(),
    "tech": "PostgreSQL Redis Kafka Kubernetes Terraform ClickHouse Elasticsearch RabbitMQ "
            "SQLite DynamoDB Cassandra Nginx Envoy Prometheus Grafana".split(),
    "company": "Acme Globex Initech Umbrella Hooli Stark Wayne Wonka Tyrell Cyberdyne Soylent "
               "Vandelay Gringotts Monarch Oscorp Aperture".split(),
    "feature": "export login checkout search sharing invoices notifications uploads "
               "dashboards reports webhooks sso billing-portal audit-log dark-theme".split(),
    "condition": "the file is larger than 2 GB|the session expires|two users edit at once|"
                 "the network is slow|the locale is Turkish|the cache is cold|"
                 "the token is rotated|the queue is full".split("|"),
    "cause": "a full disk|a bad deploy|connection pool exhaustion|a slow query|"
             "an expired certificate|DNS failure|memory pressure|a retry storm".split("|"),
    "team": "platform payments growth mobile data security support design infra".split(),
    "city": "Berlin Tokyo Lisbon Toronto Nairobi Sydney Seoul Oslo Lima Austin Hangzhou".split(),
    "day": "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split(),
    "month": "January February March April May June July August September October "
             "November December".split(),
    "food": "peanuts shellfish gluten lactose sesame soy eggs strawberries".split(),
}
WORDS["thing2"] = WORDS["thing"]
WORDS["person2"] = WORDS["person"]
WORDS["food2"] = WORDS["food"]
WORDS["team2"] = WORDS["team"]


def _zipf_choice(rng: random.Random, items: list[str]) -> str:
    # P(rank r) ~ 1/r: the head of each vocabulary is common, the tail rare.
    weights = _WEIGHTS.setdefault(len(items), [1 / (r + 1) for r in range(len(items))])
    return rng.choices(items, weights)[0]


_WEIGHTS: dict[int, list[float]] = {}


def memory_texts(n: int, seed: int = 1) -> list[str]:
    """``n`` distinct memory texts (a repeated draw is drawn again, so none dedups)."""
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < n:
        template = rng.choice(TEMPLATES)
        fields = {k: _zipf_choice(rng, v) for k, v in WORDS.items()}
        fields.update(ticket=f"INC-{rng.randint(100, 99999)}", num=str(rng.randint(50, 5000)),
                      date=f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                      time=f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}")
        out[template.format(**fields)] = None
    return list(out)
