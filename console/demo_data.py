"""Fictional demo data: the memories of a small product team's AI agents.

Everything here is invented for demos and tests and written by us; it is not taken from any
data set. "Harbor Labs" is a made-up company that builds a reporting and billing SaaS called
Harbor. Its product team is Mei Lin (product), Arjun Rao (backend lead), 王磊 (backend),
Sofia Costa (frontend and design), 陈静 (QA) and Tom Becker (SRE). Their agents keep
bilingual (Chinese and English) memories of meetings, incidents, decisions, customers and
personal preferences between 2026-08-01 and 2026-11-28. Customers, tickets, incidents and
e-mail addresses are fictional as well (``harbor.example`` is a reserved example domain).

The module is pure Python (no Django imports) and deterministic: every call of
:func:`demo_memories` or :func:`demo_sessions` builds the same data from ``random.Random(42)``.
"""

from __future__ import annotations

import random
import re
from datetime import UTC, date, datetime, time, timedelta

# --- World -----------------------------------------------------------------------------------

MEI = "Mei Lin"
ARJUN = "Arjun Rao"
SOFIA = "Sofia Costa"
WANG = "王磊"
CHEN = "陈静"
TOM = "Tom Becker"
PEOPLE = (MEI, ARJUN, SOFIA, WANG, CHEN, TOM)
CHINESE_SPEAKERS = (WANG, CHEN)

NS_TEAM = "team-harbor"
NS_SUPPORT = "agent-support"
NS_OPS = "agent-ops"
NS_WANG = "王磊"
NS_MEI = "mei.lin@harbor.example"
NAMESPACES = (NS_TEAM, NS_SUPPORT, NS_OPS, NS_WANG, NS_MEI)

LONG, SHORT, WORKING = "long_term", "short_term", "working"

FIRST_DAY = date(2026, 8, 1)
LAST_DAY = date(2026, 11, 28)
SPRINT_38_START = date(2026, 8, 3)  # two-week sprints start on Mondays

# On-call rotates every Monday; the week starting on HANDOVERS[i] belongs to
# ONCALL_ROTATION[(i + 1) % 3].
ONCALL_ROTATION = (WANG, TOM, ARJUN)

PLAN_ZH = {"Enterprise": "企业版", "Business": "商业版", "Starter": "入门版"}

# The tables below are hand-aligned data; keep the formatter from exploding them.
# fmt: off

# --- Team: decisions, facts, preferences ------------------------------------------------------

# (day, author, source, tags, content)
TEAM_DECISIONS = (
    ("2026-08-10", MEI, "meeting", "release process",
     "Releases now go out every second Thursday; hotfixes can ship any weekday before 15:00 UTC."),
    ("2026-08-12", ARJUN, "slack", "api versioning",
     "Public API changes must be additive within v2; breaking changes wait for v3, which is not "
     "planned before 2027."),
    ("2026-08-17", CHEN, "meeting", "qa release",
     "Release candidates must pass the full regression suite on staging for 24 hours before "
     "going to production."),
    ("2026-08-17", CHEN, "meeting", "qa 测试",
     "决定从 8 月起所有新接口必须附带契约测试，由陈静负责检查。"),
    ("2026-08-24", TOM, "meeting", "oncall rotation",
     "On-call rotates weekly on Monday at 08:00 UTC, and the outgoing engineer writes a handover "
     "note in #ops."),
    ("2026-08-24", MEI, "meeting", "文档 流程",
     "决定每个功能上线前由负责人补齐中英文帮助文档。"),
    ("2026-08-31", TOM, "meeting", "监控 告警",
     "决定把告警统一发到 #ops 频道，夜间只有 P1 告警会电话通知值班人。"),
    ("2026-09-02", TOM, "slack", "security secrets",
     "All service secrets move to Vault; no new credentials go into Kubernetes manifests."),
    ("2026-09-07", SOFIA, "meeting", "frontend design-system",
     "The web dashboard adopts the new design tokens from v2.8 onward; the old color variables "
     "are deprecated."),
    ("2026-09-07", MEI, "meeting", "billing vip",
     "VIP 客户续费流程改为自动扣款，连续三次扣款失败后再转人工跟进。"),
    ("2026-09-14", MEI, "meeting", "export roadmap",
     "Scheduled exports are out of scope for v2.8; we ship one-off CSV export first and revisit "
     "scheduling in November."),
    ("2026-09-14", WANG, "meeting", "export csv",
     "周会决定：下个版本支持导出 CSV，负责人王磊。"),
    ("2026-09-21", TOM, "slack", "redis capacity",
     "After INC-231 we agreed to cap session TTL at 7 days and alert when Redis memory passes "
     "80%."),
    ("2026-09-21", WANG, "meeting", "导出 性能",
     "导出任务超过 10 万行时改为异步生成，完成后通过邮件发送下载链接。"),
    ("2026-09-28", ARJUN, "meeting", "billing postgres migration",
     "We decided to move the billing service to PostgreSQL 16; the cutover is scheduled for "
     "2026-10-12 between 02:00 and 04:00 UTC."),
    ("2026-10-05", SOFIA, "slack", "mobile",
     "The mobile app keeps supporting iOS 16 until March 2027; the Android minimum stays at "
     "API level 28."),
    ("2026-10-12", WANG, "meeting", "postgres 迁移",
     "计费服务已在 2026-10-12 完成到 PostgreSQL 16 的切换，旧库保留只读 30 天。"),
    ("2026-10-19", ARJUN, "meeting", "code-review billing",
     "Every pull request touching billing needs two approvals, one of them from Arjun Rao or "
     "王磊."),
    ("2026-10-19", CHEN, "meeting", "发布 质量",
     "v2.8 发布前必须清零所有 P1 缺陷，P2 缺陷由陈静评估是否延期。"),
    ("2026-10-26", MEI, "meeting", "support sla",
     "Enterprise tickets get a first response within 2 business hours; Business plan tickets "
     "within 8."),
    ("2026-10-26", SOFIA, "slack", "i18n 前端",
     "控制台界面默认语言跟随浏览器设置，简体中文翻译由陈静审核。"),
    ("2026-11-02", TOM, "meeting", "observability logging",
     "We are dropping the self-hosted ELK stack and moving logs to Grafana Loki by the end of "
     "November."),
    ("2026-11-02", MEI, "meeting", "roadmap 报表",
     "Q4 路线图调整：自定义报表推迟到明年一季度，优先做 Excel 导出。"),
    ("2026-11-09", ARJUN, "jira", "kafka notifications",
     "Notification retries move from cron jobs to a Kafka retry topic with exponential backoff."),
    ("2026-11-16", MEI, "meeting", "release freeze",
     "Code freeze for the year-end release starts on 2026-12-14; after that only P1 fixes are "
     "merged."),
    ("2026-11-16", TOM, "meeting", "备份 postgres",
     "数据库备份保留策略改为每日全量保留 14 天、每周全量保留 12 周。"),
    ("2026-11-23", ARJUN, "meeting", "api 限流",
     "公共 API 默认限流调整为每分钟 600 次请求，企业版可申请提高到 3000 次。"),
)

# (author, source, tags, content)
TEAM_FACTS = (
    (MEI, "agent", "team",
     "Harbor Labs product team: Mei Lin (product), Arjun Rao (backend lead), 王磊 (backend), "
     "Sofia Costa (frontend and design), 陈静 (QA) and Tom Becker (SRE)."),
    (MEI, "agent", "team timezone",
     "The team is spread across Singapore, Bangalore, Shanghai, Lisbon and Berlin; the daily "
     "standup is at 08:00 UTC."),
    (MEI, "meeting", "周会",
     "团队周会在每周一 08:30 UTC，由 Mei Lin 主持，中英文都可以发言。"),
    (ARJUN, "jira", "jira process",
     "Jira project HAR is for product work, SUP for support tickets, INC for incidents and "
     "FEEDBACK for customer requests."),
    (CHEN, "meeting", "process qa",
     "Definition of done: code reviewed, tests green, help docs updated in Chinese and English, "
     "and the feature flag removed or documented."),
    (ARJUN, "slack", "技术债",
     "技术债清单放在 Confluence 的 Harbor Tech Debt 页面，每个迭代至少处理一项。"),
    (SOFIA, "slack", "feature-flags",
     "Feature flags are managed in Unleash; flags older than 60 days are reviewed in the retro."),
    (ARJUN, "agent", "stack",
     "The Harbor web dashboard is React with TypeScript; the backend services are written in "
     "Python (Django) and Go."),
    (SOFIA, "meeting", "design review",
     "Design reviews happen on Tuesdays at 09:00 UTC; Sofia Costa sends the Figma link the day "
     "before."),
)

# (person, source, tags, content)
PREFERENCES = (
    (CHEN, "slack", "preference code-review", "陈静喜欢在周五下午做代码评审。"),
    (WANG, "slack", "preference docs", "王磊更习惯用中文写技术文档，英文版由 Mei Lin 校对。"),
    (MEI, "slack", "preference communication",
     "Mei Lin prefers written status updates in Slack over ad-hoc calls."),
    (ARJUN, "meeting", "preference migration",
     "Arjun Rao wants migration plans reviewed at least three days before execution."),
    (SOFIA, "slack", "preference design",
     "Sofia Costa prefers Figma comments over long Slack threads for design feedback."),
    (TOM, "slack", "preference oncall",
     "Tom Becker wants to be paged only for P1 alerts; everything else can wait for business "
     "hours."),
    (TOM, "agent", "timezone",
     "Tom Becker works from Berlin and is usually offline after 17:00 UTC."),
    (CHEN, "agent", "时区 preference", "陈静在上海，北京时间早上 9 点之前不安排会议。"),
    (WANG, "slack", "preference",
     "王磊周三下午固定准备技术分享，尽量不要在这个时间安排评审。"),
    (ARJUN, "slack", "preference code-review",
     "Arjun Rao likes pull requests under 400 changed lines; bigger ones should be split."),
    (MEI, "meeting", "digest",
     "Mei Lin writes the weekly customer digest every Friday and wants inputs by Thursday "
     "evening."),
    (SOFIA, "agent", "timezone",
     "Sofia Costa is in Lisbon and joins standup at 09:00 local time."),
    (CHEN, "jira", "qa 缺陷", "陈静希望缺陷单写清楚复现步骤、期望结果和实际结果。"),
    (WANG, "slack", "testing", "王磊喜欢用 pytest 的参数化测试覆盖边界情况。"),
    (ARJUN, "slack", "architecture docs",
     "Arjun Rao prefers ADRs (architecture decision records) in the repo over Confluence pages."),
    (MEI, "agent", "preference jira", "Mei Lin 喜欢在周一上午先看 Jira 看板再开周会。"),
)

# (sprint, author, content) -- written at the retro on the last Friday of the sprint
RETROS = (
    (39, CHEN, "Retro sprint 39: the staging environment was down for two days, which delayed "
     "regression testing."),
    (39, WANG, "回顾：接口文档和实现不一致的问题又出现了，下次评审时要对照 OpenAPI 文件检查。"),
    (40, TOM, "Retro sprint 40: alert noise dropped by half after we removed the duplicate disk "
     "alerts."),
    (40, SOFIA, "Retro sprint 40: design handoff worked better with annotated Figma frames."),
    (41, ARJUN, "Retro sprint 41: we underestimated the export work; large tenants need "
     "streaming instead of building files in memory."),
    (41, CHEN, "回顾：INC-231 期间客服没有及时拿到状态更新，以后事故频道要同步给客服。"),
    (42, MEI, "Retro sprint 42: too many mid-sprint scope changes; new requests go to the "
     "backlog unless they are P1."),
    (42, WANG, "回顾：PostgreSQL 16 迁移演练很顺利，演练脚本应该保留下来作为模板。"),
    (43, TOM, "Retro sprint 43: the cutover runbook was good, but replication lag monitoring "
     "came too late (see INC-244)."),
    (43, CHEN, "回顾：v2.8 的回归测试用了 3 天，计划把冒烟测试自动化，目标缩短到 1 天。"),
    (44, SOFIA, "Retro sprint 44: the Chinese UI string review caught 40 wording issues before "
     "release."),
    (45, ARJUN, "Retro sprint 45: pairing on the Kafka retry topic cut down review "
     "back-and-forth a lot."),
    (45, MEI, "回顾：客户反馈收集太分散，决定统一记录到 Jira 的 FEEDBACK 项目。"),
)

# (sprint, type, author, content) -- written at planning on the sprint's first Monday
PLANNING = (
    (41, LONG, MEI, "Sprint 41 goal: finish the CSV export API and start the PostgreSQL 16 "
     "rehearsal."),
    (42, LONG, MEI, "Sprint 42 goal: rehearse the billing database cutover twice and close the "
     "export UI."),
    (43, LONG, MEI, "Sprint 43 goal: ship v2.8.0 with CSV export and complete the billing "
     "migration."),
    (43, SHORT, ARJUN, "Arjun Rao has reduced capacity in sprint 43 because of the migration "
     "on-call."),
    (44, LONG, MEI, "Sprint 44 目标：修复 v2.8 反馈的问题，启动 Excel 导出的技术调研。"),
    (44, SHORT, WANG, "王磊本迭代负责导出功能的性能优化，预计 5 个故事点。"),
    (45, LONG, MEI, "Sprint 45 goal: move notification retries to Kafka and prepare v2.9.0."),
    (45, WORKING, CHEN, "陈静在整理 v2.9 的回归用例清单，还差移动端部分。"),
    (46, SHORT, MEI, "Sprint 46 planning: capacity is lower because Sofia Costa is on leave "
     "from 2026-11-30 to 2026-12-04."),
    (46, WORKING, ARJUN, "Open question for sprint 46: should the Loki migration include the "
     "audit logs or only application logs?"),
    (46, LONG, MEI, "Sprint 46 目标：完成 Loki 日志迁移，准备年底代码冻结。"),
)

# (monday, owner, item_en, item_zh) -- action items from the Monday weekly sync
WEEKLY_ACTIONS = (
    ("2026-08-03", WANG, "add request IDs to all billing service logs",
     "给计费服务的所有日志加上 request ID"),
    ("2026-08-10", CHEN, "set up the nightly regression run on staging",
     "在预发环境配置每晚自动回归"),
    ("2026-08-17", SOFIA, "draft the new empty-state illustrations for reports",
     "设计报表页的新空状态插图"),
    ("2026-08-17", ARJUN, "remove the deprecated v1 billing endpoints", "下线废弃的 v1 计费接口"),
    ("2026-08-24", TOM, "rotate the Redis credentials and move them to Vault",
     "轮换 Redis 凭证并迁移到 Vault"),
    ("2026-08-31", ARJUN, "write the ADR for the PostgreSQL 16 upgrade",
     "编写 PostgreSQL 16 升级的架构决策记录"),
    ("2026-09-07", WANG, "prototype a streaming CSV export for large tenants",
     "为大租户实现流式 CSV 导出原型"),
    ("2026-09-14", MEI, "collect export requirements from five Enterprise customers",
     "收集五家企业版客户的导出需求"),
    ("2026-09-21", TOM, "add a Redis memory alert at 80%", "添加 Redis 内存 80% 告警"),
    ("2026-09-28", CHEN, "prepare the test plan for the billing cutover",
     "准备计费库切换的测试计划"),
    ("2026-10-05", ARJUN, "run the second cutover rehearsal on a production snapshot",
     "用生产快照进行第二次切换演练"),
    ("2026-10-05", SOFIA, "review the Chinese UI strings with 陈静", "和陈静一起审核中文界面文案"),
    ("2026-10-12", SOFIA, "finish the export progress indicator in the web dashboard",
     "完成控制台里的导出进度提示"),
    ("2026-10-12", WANG, "write the Chinese help article for CSV export",
     "撰写 CSV 导出的中文帮助文档"),
    ("2026-10-19", CHEN, "sign off the v2.8.0 release candidate", "签收 v2.8.0 候选版本"),
    ("2026-11-02", TOM, "automate certificate renewal for the status page",
     "实现状态页证书自动续期"),
    ("2026-11-02", MEI, "publish the Q4 roadmap update to customers", "向客户发布 Q4 路线图更新"),
    ("2026-11-09", ARJUN, "design the Kafka retry topic for notifications",
     "设计通知服务的 Kafka 重试主题"),
    ("2026-11-16", CHEN, "automate the smoke tests for the mobile app", "把移动端冒烟测试自动化"),
    ("2026-11-23", TOM, "migrate application logs from ELK to Loki",
     "把应用日志从 ELK 迁移到 Loki"),
    ("2026-11-23", WANG, "evaluate libraries for Excel export", "评估 Excel 导出用的第三方库"),
)

WEEKLY_TEMPLATES_EN = (
    "Weekly sync: {owner} will {item} this sprint.",
    "Action item from the weekly meeting: {owner} to {item} by {due}.",
)
WEEKLY_TEMPLATES_ZH = (
    "周会决定：{item}，负责人{owner}。",
    "周会待办：{owner}负责{item}，{due}前完成。",
)

# (sprint, person, task_en, task_zh) -- what people report in standups
STANDUP_TASKS = (
    (38, WANG, "request ID logging in the billing service", "计费服务的 request ID 日志"),
    (38, CHEN, "the nightly regression pipeline", "每晚回归流水线"),
    (38, SOFIA, "the reports empty-state designs", "报表空状态设计稿"),
    (38, TOM, "the Grafana dashboard for API latency", "API 延迟的 Grafana 看板"),
    (39, ARJUN, "the removal of the v1 billing endpoints", "v1 计费接口下线"),
    (39, CHEN, "regression tests for invoice PDFs", "发票 PDF 的回归用例"),
    (39, TOM, "the Redis credential rotation", "Redis 凭证轮换"),
    (39, SOFIA, "the settings page redesign", "设置页改版"),
    (40, ARJUN, "the PostgreSQL 16 ADR", "PostgreSQL 16 升级的 ADR"),
    (40, WANG, "the export API contract", "导出接口的契约定义"),
    (40, TOM, "the Vault migration for service secrets", "服务密钥迁移到 Vault 的工作"),
    (40, MEI, "the export requirements interviews", "导出需求访谈"),
    (41, WANG, "the streaming CSV export prototype", "流式 CSV 导出原型"),
    (41, TOM, "the Redis memory alerts", "Redis 内存告警"),
    (41, CHEN, "contract tests for the export API", "导出接口的契约测试"),
    (41, SOFIA, "the export button and dialog", "导出按钮和弹窗"),
    (42, ARJUN, "the first billing cutover rehearsal", "第一次计费库切换演练"),
    (42, CHEN, "the billing cutover test plan", "计费库切换测试计划"),
    (42, SOFIA, "the export progress indicator", "导出进度提示"),
    (42, WANG, "pagination for large exports", "大数据量导出的分页逻辑"),
    (43, ARJUN, "the production cutover runbook", "生产切换手册"),
    (43, WANG, "the async export job queue", "异步导出任务队列"),
    (43, CHEN, "the v2.8 regression run", "v2.8 回归测试"),
    (43, MEI, "the v2.8 release notes", "v2.8 发布说明"),
    (44, WANG, "export performance tuning", "导出性能优化"),
    (44, SOFIA, "the Chinese UI string review", "中文界面文案审核"),
    (44, TOM, "the status page certificate automation", "状态页证书自动续期"),
    (44, MEI, "the Q4 roadmap update", "Q4 路线图更新"),
    (45, ARJUN, "the Kafka retry topic for notifications", "通知服务的 Kafka 重试主题"),
    (45, CHEN, "mobile smoke test automation", "移动端冒烟测试自动化"),
    (45, TOM, "the OpenSearch cluster resize", "OpenSearch 集群扩容"),
    (45, WANG, "the Excel export library evaluation", "Excel 导出库选型"),
    (46, TOM, "the ELK-to-Loki log migration", "ELK 到 Loki 的日志迁移"),
    (46, WANG, "the Excel export spike", "Excel 导出技术预研"),
    (46, CHEN, "the year-end release test plan", "年底版本测试计划"),
)

# (template, memory type, base importance, allowed on a sprint's first standup?)
# "Finished" updates are worth keeping long term, but not on day two of a sprint.
STANDUP_TEMPLATES_EN = (
    ("Standup: {person} is still working on {task} and expects to finish by Thursday.",
     SHORT, 0.3, True),
    ("Standup: {person} finished {task} and is addressing review comments today.",
     LONG, 0.4, False),
    ("Standup: {person} is waiting on input from {other} before continuing with {task}.",
     SHORT, 0.45, True),
    ("Standup: {person} will pair with {other} this afternoon on {task}.", SHORT, 0.25, True),
)
STANDUP_TEMPLATES_ZH = (
    ("站会：{person}还在做{task}，预计本周四完成。", SHORT, 0.3, True),
    ("站会：{person}已经完成了{task}，今天开始处理评审意见。", LONG, 0.4, False),
    ("站会：{person}的{task}在等{other}的反馈，暂时卡住了。", SHORT, 0.45, True),
    ("站会：{person}今天主要推进{task}，下午和{other}结对。", SHORT, 0.25, True),
)

# (day, version, author, content)
RELEASES = (
    ("2026-08-20", "v2.6.0", MEI, "Release v2.6.0 shipped on 2026-08-20 with the redesigned "
     "settings page and invoice PDF fixes."),
    ("2026-09-03", "v2.6.1", ARJUN, "The v2.6.1 hotfix stopped duplicate invoice emails caused "
     "by webhook retries (INC-219)."),
    ("2026-09-24", "v2.7.0", MEI,
     "v2.7.0 已于 2026-09-24 发布，包含新的报表空状态设计和 v1 计费接口下线。"),
    ("2026-10-01", "v2.7.1", CHEN, "v2.7.1 fixed the timezone bug where weekly reports started "
     "on Sunday for tenants in Asia."),
    ("2026-10-22", "v2.8.0", MEI, "Release v2.8.0 shipped on 2026-10-22: one-off CSV export, "
     "an export progress indicator and the new design tokens."),
    ("2026-10-29", "v2.8.1", WANG,
     "v2.8.1 修复了导出文件在 Excel 中打开时中文乱码的问题（增加了 UTF-8 BOM）。"),
    ("2026-11-19", "v2.9.0", MEI, "v2.9.0 shipped on 2026-11-19 with Kafka-based notification "
     "retries and faster search."),
    ("2026-11-26", "v2.9.1", CHEN,
     "v2.9.1 热修复：移动端在 iOS 16 上打开报表页崩溃的问题已修复。"),
)

# --- Ops: incidents, runbook, on-call ---------------------------------------------------------

# (id, day, "HH:MM" UTC, severity, commander, service, summary, root cause, follow-up)
INCIDENTS = (
    ("INC-219", "2026-08-19", "14:20", "P2", ARJUN, "billing",
     "Incident INC-219: the billing webhook retried on 502 responses and sent duplicate invoice "
     "emails to 37 tenants.",
     "Root cause of INC-219: the retry handler was not idempotent because it never checked the "
     "invoice event ID.",
     "INC-219 后续：王磊为 webhook 处理加上了幂等键，已随 v2.6.1 上线。"),
    ("INC-225", "2026-09-02", "09:45", "P2", TOM, "cdn",
     "Incident INC-225: the CDN served a stale JavaScript bundle after a deploy, so the "
     "dashboard showed a blank page for some users.",
     "INC-225 根因：CDN 缓存规则把 index.html 缓存了 24 小时，导致新旧资源文件不匹配。",
     "Follow-up for INC-225: index.html is now served with Cache-Control: no-cache; owner "
     "Sofia Costa."),
    ("INC-228", "2026-09-09", "13:00", "P3", TOM, "email",
     "Incident INC-228: password reset emails to QQ Mail addresses were delayed because our "
     "sender reputation dropped.",
     "INC-228 根因：营销邮件和事务邮件共用同一个发信域名，投诉率上升影响了发信信誉。",
     "Follow-up for INC-228: transactional email now uses the separate domain "
     "mail.harbor.example."),
    ("INC-231", "2026-09-17", "03:10", "P1", TOM, "redis",
     "Incident INC-231: Redis memory hit 95% at 03:10 UTC; evictions caused login failures for "
     "about 40 minutes.",
     "Root cause of INC-231: sessions were created without a TTL after a config change in "
     "August, so keys piled up for weeks.",
     "INC-231 后续行动：会话 TTL 上限设为 7 天，Redis 内存超过 80% 时告警，负责人 Tom Becker。"),
    ("INC-238", "2026-10-03", "11:30", "P2", ARJUN, "kafka",
     "Incident INC-238: consumer lag on the notifications topic reached 2 million messages; "
     "emails were delayed by up to 3 hours.",
     "INC-238 根因：一个消费者实例卡在反序列化异常上不断重试，分区没有被重新分配。",
     "Follow-up for INC-238: poison messages now go to a dead-letter topic after 5 attempts."),
    ("INC-241", "2026-10-08", "07:20", "P3", SOFIA, "frontend",
     "Incident INC-241: the reports page crashed in Safari 16 because of an unsupported regex "
     "lookbehind.",
     "INC-241 根因：新引入的日期解析库用了 Safari 16 不支持的正则语法，浏览器测试矩阵也没有覆盖 "
     "Safari。",
     "Follow-up for INC-241: Safari 16 is now in the browser test matrix; owner 陈静."),
    ("INC-244", "2026-10-12", "03:25", "P2", ARJUN, "postgres",
     "Incident INC-244: during the PostgreSQL 16 cutover, replication lag reached 90 seconds "
     "and billing writes were paused for 12 minutes.",
     "INC-244 根因：切换前没有暂停夜间对账任务，大量写入导致复制延迟。",
     "Follow-up for INC-244: the cutover runbook now pauses batch jobs and checks replication "
     "lag before switching."),
    ("INC-247", "2026-10-27", "06:05", "P3", TOM, "tls",
     "Incident INC-247: the TLS certificate for status.harbor.example expired and browsers "
     "showed a security warning on the status page.",
     "INC-247 根因：状态页证书是手动申请的，不在自动续期范围内。",
     "Follow-up for INC-247: all certificates are now managed by cert-manager, with expiry "
     "alerts 14 days ahead."),
    ("INC-250", "2026-11-04", "15:40", "P2", WANG, "export",
     "事故 INC-250：一个大租户同时发起了 12 个导出任务，导出工作节点内存耗尽后反复重启。",
     "Root cause of INC-250: export jobs had no per-tenant concurrency limit.",
     "INC-250 后续：每个租户最多同时运行 2 个导出任务，其余排队，负责人王磊。"),
    ("INC-252", "2026-11-09", "08:50", "P2", TOM, "search",
     "Incident INC-252: the OpenSearch cluster went yellow after a node ran out of disk; search "
     "results were incomplete for 25 minutes.",
     "INC-252 根因：日志索引没有配置生命周期策略，旧索引占满了磁盘。",
     "Follow-up for INC-252: an index lifecycle policy deletes log indices after 30 days, and "
     "the cluster was resized to 5 nodes."),
    ("INC-255", "2026-11-14", "22:15", "P3", TOM, "sso",
     "Incident INC-255: SSO logins for Kestrel Health failed because their SAML signing "
     "certificate was rotated without notice.",
     "INC-255 根因：我们只保存了客户的一个 SAML 签名证书，不支持新旧证书并存。",
     "Follow-up for INC-255: SSO settings now accept two signing certificates during a "
     "rotation."),
    ("INC-257", "2026-11-20", "01:35", "P2", ARJUN, "logging",
     "事故 INC-257：日志节点磁盘写满，从 01:35 UTC 起部分服务的日志丢失了约 50 分钟。",
     "Root cause of INC-257: debug logging was left on in the notification service after the "
     "Kafka retry rollout.",
     "INC-257 后续：生产环境禁止常开 debug 日志，临时开启需在 #ops 申请并设置过期时间。"),
)

# (incident, type, author, content) -- scratch notes kept while an incident is worked on
INCIDENT_NOTES = (
    ("INC-231", WORKING, TOM, "Timeline draft for INC-231: 03:10 alert, 03:14 paged, 03:30 TTL "
     "script started, 03:50 monitoring."),
    ("INC-231", SHORT, TOM, "INC-231 复盘会定在 9 月 18 日 08:30 UTC，需要客服同事一起参加。"),
    ("INC-244", WORKING, ARJUN, "Watching replication lag on pg-billing-2 after the cutover; "
     "re-enable the reconciliation job once lag stays under 5 seconds."),
    ("INC-250", WORKING, WANG,
     "正在确认 INC-250 的影响范围：除海鸥物流外，还有两个租户的导出任务失败，需要重新触发。"),
    ("INC-255", SHORT, TOM, "Waiting for Kestrel Health to send the new SAML metadata for "
     "INC-255."),
)

# (author, tags, content, day or "")
OPS_RUNBOOK = (
    (TOM, "runbook redis",
     "Runbook: if Redis memory passes 85%, look for keys without a TTL with redis-cli --bigkeys "
     "before restarting anything.", "2026-09-18"),
    (ARJUN, "postgres billing",
     "The billing database primary is pg-billing-1 in eu-central-1; the replica pg-billing-2 is "
     "read-only and serves reports.", ""),
    (WANG, "export workers",
     "Never restart the export workers during business hours in Asia; Chinese tenants run most "
     "exports between 01:00 and 09:00 UTC.", ""),
    (TOM, "值班 事故",
     "值班手册：P1 事故需要在 15 分钟内在 #incidents 开频道并指定事故指挥人。", ""),
    (TOM, "deploy argocd",
     "Production deploys go through Argo CD; a manual kubectl apply is only allowed during "
     "incidents.", ""),
    (ARJUN, "kafka alerts",
     "Kafka consumer lag alerts fire at 100k messages for notifications and 500k for analytics.",
     "2026-10-06"),
    (ARJUN, "数据库 迁移",
     "生产环境数据库变更必须通过迁移脚本执行，并提前在预发环境跑一遍。", ""),
    (TOM, "statuspage incident",
     "A status page update is required for any incident that affects more than one tenant.", ""),
    (TOM, "grafana latency",
     "The Grafana dashboard 'API Overview' is the first place to check latency; p95 above "
     "800 ms is abnormal.", ""),
    (TOM, "回滚 deploy", "回滚步骤：在 Argo CD 中同步上一个版本，然后在 #ops 说明回滚原因。", ""),
    (TOM, "staging cost",
     "The staging cluster is scaled down to zero between 20:00 and 06:00 UTC on weekends to save "
     "costs.", ""),
    (SOFIA, "sentry frontend",
     "The Sentry project 'harbor-web' is noisy; filter by release to find regressions after a "
     "deploy.", ""),
    (TOM, "backup postgres",
     "A pg_dump of the billing database runs at 00:30 UTC daily and is verified by a restore "
     "test every Sunday.", ""),
    (TOM, "opensearch 容量",
     "OpenSearch 集群扩容后共有 5 个节点，单节点磁盘告警阈值为 75%。", "2026-11-11"),
    (TOM, "oncall escalation",
     "The on-call number forwards to PagerDuty; it escalates to Arjun Rao after 15 minutes "
     "without acknowledgement.", ""),
    (ARJUN, "terraform ownership",
     "Tom Becker owns the Terraform repository; changes to networking need his review.", ""),
    (TOM, "值班 交接", "值班交接时必须写明：未关闭的告警、进行中的变更、需要关注的客户。", ""),
    (TOM, "loki retention",
     "Loki keeps application logs for 30 days and audit logs for 1 year.", "2026-11-03"),
    (ARJUN, "postgres billing",
     "After the PostgreSQL 16 cutover the old billing database stays read-only until "
     "2026-11-11 and is then deleted.", "2026-10-13"),
    (TOM, "证书 cert-manager",
     "证书由 cert-manager 管理，到期前 14 天会在 #ops 告警。", "2026-10-30"),
    (WANG, "export autoscaling",
     "The export worker pool autoscales between 2 and 8 pods based on queue length.", ""),
    (ARJUN, "api rate-limit",
     "HTTP 429 errors from the public API are expected for tenants above 600 requests per "
     "minute.", "2026-11-24"),
    (ARJUN, "发布 审批",
     "夜间（北京时间 22:00 至次日 08:00）发布需要 Arjun Rao 或 Tom Becker 批准。", ""),
    (TOM, "redis usage",
     "Redis holds sessions and rate-limit counters only; do not store export results there.", ""),
    (TOM, "maintenance customer",
     "Kestrel Health needs notice of maintenance windows at least 5 business days ahead.", ""),
)

# (monday, open item in English, the same in Chinese)
HANDOVERS = (
    ("2026-08-24", "watch the billing webhook retry queue after the INC-219 fix",
     "观察 INC-219 修复后的计费 webhook 重试队列"),
    ("2026-08-31", "the CDN cache rule change is still waiting for review",
     "CDN 缓存规则的修改还在等待评审"),
    ("2026-09-07", "QQ Mail delivery is still slow for some tenants",
     "部分租户的 QQ 邮箱投递仍然较慢"),
    ("2026-09-14", "disk usage on log-node-2 is at 70%", "log-node-2 磁盘使用率已经到 70%"),
    ("2026-09-21", "Redis memory is back to 55% after the INC-231 cleanup; the new 80% alert "
     "may be noisy", "INC-231 清理后 Redis 内存回到 55%，新的 80% 告警可能会误报"),
    ("2026-09-28", "the second cutover rehearsal is scheduled for Wednesday night",
     "第二次切换演练安排在周三晚上"),
    ("2026-10-05", "the notification dead-letter topic has 1,200 messages to replay",
     "通知死信主题里有 1200 条消息待重放"),
    ("2026-10-12", "the old billing database is read-only, but reports may still query it by "
     "mistake", "旧计费库已经只读，报表服务可能还会误查旧库"),
    ("2026-10-19", "v2.8.0 goes out on Thursday; stay online until the smoke tests pass",
     "周四发布 v2.8.0，冒烟测试通过前请保持在线"),
    ("2026-10-26", "export queue latency spikes around 02:00 UTC",
     "凌晨 02:00 UTC 左右导出队列延迟会升高"),
    ("2026-11-02", "cert-manager is rolling out and a few certificates still need to be "
     "migrated", "cert-manager 正在上线，还有几张证书需要迁移"),
    ("2026-11-09", "OpenSearch is being resized to 5 nodes, so expect a brief yellow status",
     "OpenSearch 正在扩容到 5 个节点，期间可能短暂变黄"),
    ("2026-11-16", "the Kafka retry topic goes live with v2.9.0 on Thursday",
     "Kafka 重试主题会随 v2.9.0 在周四上线"),
    ("2026-11-23", "the Loki migration starts and ELK stays read-only for two weeks",
     "Loki 迁移开始，ELK 保持只读两周"),
)

HANDOVER_TEMPLATES_EN = (
    "On-call handover from {a} to {b}: {item}.",
    "{a} handed on-call to {b}. Open item: {item}.",
)
HANDOVER_TEMPLATES_ZH = (
    "值班交接：{a}交给{b}，待跟进：{item}。",
    "{a}把值班交给了{b}，需要关注：{item}。",
)

# --- Support: customers, tickets, playbook ----------------------------------------------------

# (name, plan, contact, lang, renewal, channel_en, channel_zh, note day, note)
CUSTOMERS = (
    ("Bluefin Logistics", "Enterprise", "Dana Whitfield", "en", "2027-01-15", "email", "邮件",
     "2026-09-15",
     "Bluefin Logistics exports about 300k shipment rows per month and was the main driver for "
     "streaming CSV export."),
    ("青山零售", "Business", "刘芳", "zh", "2026-12-01", "WeChat", "微信", "2026-08-12",
     "青山零售有 40 家门店，每周一早上需要上周的销售报表。"),
    ("Maple & Rye Bakery", "Starter", "Sam Ortiz", "en", "2027-03-02", "live chat", "在线客服",
     "2026-10-02",
     "Maple & Rye Bakery is price-sensitive and has asked twice about an annual discount."),
    ("Kestrel Health", "Enterprise", "Helen Park", "en", "2027-02-20", "email", "邮件",
     "2026-08-25",
     "Kestrel Health requires SSO via SAML and a signed data processing agreement for every new "
     "module."),
    ("星河教育", "Business", "赵雪", "zh", "2026-12-18", "phone", "电话", "2026-09-29",
     "星河教育的账号由三个校区共用，希望按校区区分权限。"),
    ("海鸥物流", "Enterprise", "周博", "zh", "2027-01-08", "WeChat", "微信", "2026-09-20",
     "海鸥物流是 VIP 客户，INC-231 期间受影响最大，我们已承诺每月发送一份稳定性报告。"),
    ("Tidewater Freight", "Business", "Luis Moreno", "en", "2026-12-10", "Slack Connect",
     "Slack 共享频道", "2026-11-18",
     "Tidewater Freight uses the public API heavily and hit the 600 requests per minute limit "
     "in November."),
    ("Oakridge Dental", "Starter", "Grace Kim", "en", "2027-04-01", "email", "邮件",
     "2026-08-28",
     "Oakridge Dental only uses the appointment reports and rarely logs in more than once a "
     "week."),
)

PROFILE_TEMPLATE_EN = (
    "{name} is on the {plan} plan; the main contact is {contact}, who prefers {channel}."
)
PROFILE_TEMPLATE_ZH = "{name}是{plan}客户，对接人是{contact}，偏好通过{channel}沟通。"
RENEWAL_TEMPLATE_EN = (
    "{name} renews on {renewal}; schedule a check-in call with {contact} two weeks before."
)
RENEWAL_TEMPLATE_ZH = "{name}的合同将于 {renewal} 到期续费，需要提前两周联系{contact}。"

# (ticket, day, author, customer, type, content)
TICKETS = (
    ("SUP-1031", "2026-08-06", SOFIA, "Maple & Rye Bakery", LONG,
     "Maple & Rye Bakery could not download invoice PDFs in Firefox; the workaround is the email "
     "copy until the v2.6.0 fix."),
    ("SUP-1034", "2026-08-11", CHEN, "青山零售", LONG,
     "青山零售反馈周报表从周日开始计算，希望改为从周一开始。"),
    ("SUP-1034", "2026-10-01", CHEN, "青山零售", LONG,
     "SUP-1034 已在 v2.7.1 修复，已通知刘芳。"),
    ("SUP-1038", "2026-08-20", ARJUN, "Tidewater Freight", LONG,
     "Tidewater Freight asked how to verify webhooks; we pointed them to the HMAC-SHA256 header "
     "X-Harbor-Signature."),
    ("SUP-1040", "2026-08-19", SOFIA, "", LONG,
     "Several tenants reported duplicate invoice emails; linked to INC-219 and sent an apology "
     "by email."),
    ("SUP-1042", "2026-09-03", SOFIA, "Bluefin Logistics", LONG,
     "Bluefin Logistics reports that CSV exports over 50k rows time out after 30 seconds."),
    ("SUP-1042", "2026-10-23", SOFIA, "Bluefin Logistics", LONG,
     "SUP-1042 closed: Bluefin confirmed that the v2.8.0 streaming export handles 300k rows in "
     "under two minutes."),
    ("SUP-1047", "2026-09-17", CHEN, "海鸥物流", LONG,
     "海鸥物流在 INC-231 期间大量用户无法登录，周博要求提供事故报告。"),
    ("SUP-1047", "2026-09-19", CHEN, "海鸥物流", LONG,
     "已向海鸥物流发送 INC-231 的中文事故报告，并赠送一个月服务费作为补偿。"),
    ("SUP-1050", "2026-09-22", SOFIA, "Kestrel Health", LONG,
     "Kestrel Health asked whether exported files contain patient names: only if their admin "
     "enables the custom field."),
    ("SUP-1053", "2026-09-29", CHEN, "星河教育", LONG,
     "星河教育希望导出的 Excel 文件按校区拆分成多个工作表。已记录为需求 FEEDBACK-88，暂不承诺时间。"),
    ("SUP-1056", "2026-10-06", SOFIA, "Oakridge Dental", LONG,
     "Oakridge Dental could not reset a password because the email went to spam; we resent it "
     "from the new transactional domain."),
    ("SUP-1058", "2026-10-12", ARJUN, "Tidewater Freight", LONG,
     "Tidewater Freight saw 503 errors from the billing API during the PostgreSQL cutover "
     "window, which had been announced in advance."),
    ("SUP-1061", "2026-10-14", CHEN, "青山零售", LONG,
     "青山零售询问 VIP 自动扣款是否支持对公转账。答复：目前只支持信用卡和支付宝，对公转账需要改为"
     "人工开票。"),
    ("SUP-1063", "2026-10-23", SOFIA, "Bluefin Logistics", LONG,
     "Dana Whitfield from Bluefin Logistics asked for scheduled exports; logged as FEEDBACK-91 "
     "for the November review."),
    ("SUP-1066", "2026-10-29", CHEN, "星河教育", LONG,
     "星河教育反馈导出的 CSV 用 Excel 打开中文乱码，v2.8.1 已修复，已通知客户重新导出。"),
    ("SUP-1068", "2026-10-27", SOFIA, "", LONG,
     "Customers reported a certificate warning on the status page (INC-247); reply template: "
     "the product itself was not affected."),
    ("SUP-1070", "2026-11-04", CHEN, "海鸥物流", LONG,
     "海鸥物流同时发起 12 个导出任务触发了 INC-250，已建议他们错峰导出。"),
    ("SUP-1072", "2026-11-09", SOFIA, "Maple & Rye Bakery", LONG,
     "Maple & Rye Bakery asked about an annual plan; Mei Lin approved a 15% discount for annual "
     "billing."),
    ("SUP-1075", "2026-11-14", SOFIA, "Kestrel Health", LONG,
     "Kestrel Health SSO logins failed after they rotated their SAML certificate (INC-255); "
     "Helen Park sent the new certificate and access was restored at 23:05 UTC."),
    ("SUP-1077", "2026-11-17", SOFIA, "Tidewater Freight", LONG,
     "Tidewater Freight hit HTTP 429 rate limits; we suggested batching shipment updates and "
     "offered the Enterprise limit of 3000 requests per minute."),
    ("SUP-1079", "2026-11-20", CHEN, "青山零售", LONG,
     "刘芳希望每周一北京时间 7 点前自动收到上周销售报表，目前还需要手动导出。"),
    ("SUP-1080", "2026-11-24", CHEN, "星河教育", LONG,
     "星河教育的续费报价已发送，赵雪希望在 12 月 10 日前确认校区权限功能的排期。"),
    ("SUP-1082", "2026-11-25", SOFIA, "Bluefin Logistics", LONG,
     "Bluefin Logistics wants a named technical contact for the renewal; Arjun Rao agreed to "
     "join the call."),
    ("SUP-1084", "2026-11-26", SOFIA, "Oakridge Dental", SHORT,
     "Oakridge Dental reports that search in v2.9.0 no longer finds patients by phone numbers "
     "that contain spaces."),
    ("SUP-1085", "2026-11-27", CHEN, "海鸥物流", SHORT,
     "海鸥物流要求在 11 月稳定性报告中增加导出任务成功率指标。"),
)

# (author, tags, content) -- the support agent's playbook
SUPPORT_FACTS = (
    (MEI, "refund policy", "Refunds above 500 EUR need approval from Mei Lin."),
    (CHEN, "语言 回复",
     "中文客户优先用中文回复，技术术语可以保留英文，例如 SSO、API、Webhook。"),
    (MEI, "privacy",
     "When a customer mentions data deletion, open a privacy ticket and do not confirm deletion "
     "before the privacy check is done."),
    (MEI, "sla 企业版",
     "企业版客户的工单首次响应时间为 2 个工作小时，商业版为 8 个工作小时。"),
    (SOFIA, "incident communication",
     "During incidents, status updates come from #incidents; never guess an ETA for customers."),
    (WANG, "export limits",
     "One-off CSV export supports up to 1 million rows; larger exports need a support request."),
    (WANG, "导出", "导出文件的下载链接有效期为 7 天，过期后需要重新导出。"),
    (MEI, "billing invoices",
     "Invoices are issued in EUR for European tenants and in CNY for tenants in mainland China."),
    (CHEN, "发票", "发票抬头修改需要客户管理员在设置页提交，客服不能直接修改。"),
    (SOFIA, "email",
     "Password reset emails come from no-reply@mail.harbor.example since the INC-228 fix."),
    (MEI, "pricing",
     "Annual plans get up to 15% off; for Starter customers Mei Lin approves it case by case."),
    (MEI, "vip 工单", "VIP 客户（海鸥物流、Bluefin Logistics）的工单需要同时抄送 Mei Lin。"),
    (ARJUN, "api rate-limit",
     "The public API allows 600 requests per minute by default and 3000 on Enterprise."),
    (ARJUN, "sso plans", "SSO (SAML) is only available on the Enterprise plan."),
    (MEI, "roadmap 沟通", "客户询问路线图时，只能引用已公开的 Q4 路线图，不要承诺具体日期。"),
)

# Near-duplicates: the same fact noted twice (by two agents or on two days), so the Policy
# page's consolidation has something to propose on the demo data. Each pair names the same
# things (customer, version, address, number) in one language; (namespace, day, author, tags,
# content).
NEAR_DUPLICATES = (
    (NS_SUPPORT, "2026-10-06", MEI, "refund policy",
     "Refunds above 500 EUR need approval from Mei Lin before the support agent confirms them."),
    (NS_SUPPORT, "2026-10-20", SOFIA, "email",
     "Password reset emails now come from no-reply@mail.harbor.example after the INC-228 fix."),
    (NS_TEAM, "2026-09-15", ARJUN, "release",
     "Harbor v2.6.0 ships on Thursday 17 September; the release notes go out from "
     "no-reply@mail.harbor.example."),
    (NS_TEAM, "2026-09-16", MEI, "release",
     "Harbor v2.6.0 ships on Thursday 17 September, and the release notes go out from "
     "no-reply@mail.harbor.example."),
    (NS_OPS, "2026-10-02", TOM, "backup",
     "The nightly Postgres backup runs at 02:30 UTC and keeps 14 days of snapshots in the "
     "eu-west bucket."),
    (NS_OPS, "2026-10-09", WANG, "backup",
     "Nightly Postgres backup: runs at 02:30 UTC, keeps 14 days of snapshots in the eu-west "
     "bucket."),
    (NS_WANG, "2026-10-12", WANG, "偏好",
     "代码评审尽量安排在上午十点以后，周五下午不安排评审。"),
    (NS_WANG, "2026-10-19", WANG, "偏好",
     "代码评审尽量安排在上午十点以后，周五下午不安排代码评审。"),
)

# The ranking lab example: a query set over agent-support with graded judgments (0-3) given
# by the demo reviewer, as (query, a phrase the judged memory holds, grade). load_demo
# resolves each phrase to the memory that holds it, then saves two evaluation runs.
LAB_QUERY_SET = "support questions (demo)"
LAB_REVIEWER = "demo-reviewer"
LAB_JUDGMENTS = (
    ("refund approval", "Refunds above 500 EUR need approval from Mei Lin.", 3),
    ("refund approval", "Annual plans get up to 15% off", 1),
    ("password reset email sender", "Password reset emails come from no-reply", 3),
    ("password reset email sender", "after the INC-228 fix", 3),
    ("SSO on which plan", "SSO (SAML) is only available on the Enterprise plan.", 3),
    ("SSO on which plan", "The public API allows 600 requests per minute", 0),
    ("API rate limit", "The public API allows 600 requests per minute", 3),
    ("export row limit", "One-off CSV export supports up to 1 million rows", 3),
    ("export row limit", "导出文件的下载链接有效期为 7 天", 1),
    ("发票抬头", "发票抬头修改需要客户管理员在设置页提交", 3),
)
# The profile the example tunes between its two runs: v1 stems but also weighs recency, which
# pushes older answers down (support answers do not age); v2 drops recency. The demo's
# judgments give nDCG@5 0.757 for v1 and 0.900 for v2 (bm25: 0.751), a visible delta.
LAB_PROFILE = "support-tuned"
LAB_PROFILE_V1 = {"ranker": "bm25", "stemming": True, "w_relevance": 0.6,
                  "w_recency": 0.4, "w_importance": 0.0}
LAB_PROFILE_V2 = {"w_relevance": 1.0, "w_recency": 0.0}

# (day, type, conversation_id, author, content)
SUPPORT_SCRATCH = (
    ("2026-11-26", WORKING, "ticket-SUP-1084", SOFIA,
     "Drafting a reply to Oakridge Dental about phone number search; waiting for 王磊 to confirm "
     "whether spaces are normalized."),
    ("2026-11-27", WORKING, "ticket-SUP-1085", CHEN,
     "正在整理海鸥物流 11 月稳定性报告，导出成功率数据还需要 Tom Becker 提供。"),
    ("2026-11-23", SHORT, None, SOFIA,
     "Three customers asked about Excel export this week; collect their use cases for Mei Lin by "
     "Friday."),
    ("2026-11-18", SHORT, None, CHEN,
     "本周有两位中文客户询问如何修改发票抬头，考虑补一篇帮助文章。"),
    ("2026-11-09", WORKING, "chat-maple-2026-11-09", SOFIA,
     "The customer is asking about an annual plan; confirm the discount with Mei Lin before "
     "replying."),
    ("2026-11-25", WORKING, "ticket-SUP-1082", SOFIA,
     "Scheduling the Bluefin renewal call; candidate slots are 2026-12-02 or 2026-12-03 at "
     "15:00 UTC."),
    ("2026-11-27", SHORT, None, SOFIA,
     "Current support backlog: 14 open tickets, 3 of them from Enterprise customers."),
    ("2026-11-27", SHORT, None, CHEN, "客服周报：本周共 42 个工单，其中 11 个与导出有关。"),
)

# --- Personal namespaces ----------------------------------------------------------------------

# (day or "", type, conversation_id, source, tags, content) -- 王磊's own assistant
WANG_NOTES = (
    ("", LONG, None, "agent", "导出 代码",
     "我负责导出功能（CSV，后续是 Excel），相关代码在 services/export 目录。"),
    ("", LONG, None, "agent", "习惯", "我习惯在提交 PR 前先跑 make lint 和 make test。"),
    ("", LONG, None, "agent", "code-review", "代码评审找陈静，她周五下午集中处理评审。"),
    ("", LONG, None, "agent", "billing",
     "Arjun Rao 是计费服务的负责人，涉及计费的改动需要他批准。"),
    ("", LONG, None, "agent", "日程",
     "我的工作时间是北京时间 10:00 到 19:00，周三下午用来准备技术分享。"),
    ("2026-09-11", LONG, None, "agent", "导出 性能",
     "流式导出用服务端游标，每批 5000 行，避免一次性把数据加载到内存。"),
    ("2026-10-29", LONG, None, "agent", "导出 excel",
     "导出的 CSV 需要带 UTF-8 BOM，否则 Excel 打开中文会乱码。"),
    ("2026-11-06", LONG, None, "agent", "导出 INC-250",
     "INC-250 之后，每个租户最多同时运行 2 个导出任务。"),
    ("", LONG, None, "agent", "docs",
     "I prefer to write design docs in Chinese first; Mei Lin helps with the English version."),
    ("", LONG, None, "agent", "本地开发",
     "本地开发用 docker compose 启动 PostgreSQL 16 和 Redis，端口分别是 5432 和 6379。"),
    ("2026-11-18", LONG, None, "agent", "excel 选型",
     "Excel 导出候选库：openpyxl 和 XlsxWriter。XlsxWriter 写入更快，但不能读取已有文件。"),
    ("2026-09-30", LONG, None, "agent", "分享",
     "技术分享排期：10 月讲流式导出，12 月讲 PostgreSQL 16 迁移经验。"),
    ("2026-10-16", LONG, None, "agent", "测试",
     "陈静提醒过：边界测试要覆盖 0 行、1 行和刚好 100000 行的导出。"),
    ("", LONG, None, "agent", "1on1",
     "我和 Arjun Rao 每两周一次 1on1，时间是周四 08:30 UTC。"),
    ("2026-11-05", LONG, None, "agent", "性能 客户",
     "海鸥物流的导出量最大，性能测试要用他们的数据规模做基准。"),
    ("", LONG, None, "agent", "docs",
     "中文帮助文档放在 docs/zh 目录，发布前需要 Mei Lin 确认英文版也已同步更新。"),
    ("", LONG, None, "agent", "偏好", "北京时间晚上 9 点之后，非紧急消息请不要打扰我。"),
    ("2026-10-23", LONG, None, "agent", "客户 导出",
     "Bluefin Logistics 的 Dana Whitfield 很在意导出字段的顺序，调整字段顺序前要先通知客服。"),
    ("2026-09-24", LONG, "1on1-2026-09-24", "meeting", "1on1",
     "1on1 记录：Arjun 建议我在导出项目之后承担一部分计费服务的工作。"),
    ("2026-10-08", LONG, "1on1-2026-10-08", "meeting", "1on1 目标",
     "1on1 记录：Q4 的目标是成为计费服务的第二负责人。"),
    ("2026-10-22", SHORT, "1on1-2026-10-22", "meeting", "1on1",
     "1on1: Arjun asked me to write a postmortem template for export-related incidents."),
    ("2026-11-05", LONG, "1on1-2026-11-05", "meeting", "1on1 INC-250",
     "1on1 记录：INC-250 的复盘写得很清楚，下次可以直接在周会上分享。"),
    ("2026-11-19", LONG, "1on1-2026-11-19", "meeting", "1on1",
     "1on1 记录：下季度考虑带一位新同事，先从导出模块的代码导读开始。"),
    ("2026-09-10", WORKING, None, "agent", "prototype",
     "Prototype note: streaming export with server-side cursors keeps memory under 200 MB for "
     "300k rows."),
    ("2026-10-20", SHORT, None, "agent", "v2.8 缺陷",
     "v2.8.0 发布前还剩两个导出相关缺陷：进度条卡在 99%，以及文件名含中文时下载失败。"),
    ("2026-10-21", WORKING, None, "agent", "下载",
     "正在修复导出文件名含中文时的下载问题，需要按 RFC 5987 编码 Content-Disposition。"),
    ("2026-11-10", SHORT, None, "agent", "值班",
     "这周值班，尽量不接新需求；OpenSearch 扩容期间要注意搜索告警。"),
    ("2026-11-23", WORKING, None, "agent", "excel",
     "今天要完成 Excel 导出的技术预研文档，下午 3 点前发给 Arjun Rao 评审。"),
    ("2026-11-24", WORKING, None, "agent", "SUP-1084 搜索",
     "正在排查 SUP-1084：电话号码带空格时搜索失败，怀疑搜索索引没有做号码归一化。"),
    ("2026-11-25", SHORT, None, "agent", "待办",
     "本周待办：修复 SUP-1084、评审陈静的冒烟测试 PR、准备 Loki 迁移的日志字段清单。"),
    ("2026-11-26", SHORT, None, "agent", "SUP-1084",
     "SUP-1084 的修复已提交 PR #2291，等待陈静评审。"),
)

# (day or "", type, conversation_id, source, tags, content) -- Mei Lin's product assistant
MEI_NOTES = (
    ("", LONG, None, "agent", "role",
     "I own the product roadmap and the weekly customer digest."),
    ("2026-09-30", LONG, None, "agent", "roadmap priorities",
     "Q4 priorities in order: billing migration, CSV export, notification reliability, Excel "
     "export."),
    ("2026-11-02", LONG, None, "agent", "roadmap reports",
     "The custom report builder is postponed to Q1 2027; do not promise it to customers."),
    ("2026-11-10", LONG, None, "agent", "renewals enterprise",
     "Enterprise renewals coming up: 海鸥物流 (2027-01-08) and Bluefin Logistics (2027-01-15) "
     "need executive check-ins in December."),
    ("", LONG, None, "agent", "preference notes",
     "I like meeting notes as bullet points with owners and due dates."),
    ("", LONG, None, "agent", "preference schedule",
     "Send me a summary before 09:00 SGT on Mondays; I read it before the weekly sync."),
    ("", LONG, None, "agent", "pricing",
     "Annual discounts up to 15% are my call; anything above that goes to our CEO, Hannah Vogel."),
    ("2026-11-05", LONG, None, "agent", "team billing",
     "王磊 is ready to take on more of the billing service after the export project."),
    ("2026-11-16", LONG, None, "agent", "team leave",
     "Sofia Costa is on leave from 2026-11-30 to 2026-12-04; design reviews pause that week."),
    ("", LONG, None, "agent", "feedback jira",
     "Customer feedback lives in the Jira FEEDBACK project; tag each item with the customer "
     "name."),
    ("2026-09-22", LONG, None, "agent", "客户 报告",
     "海鸥物流每月需要一份中文稳定性报告，由我审核后发送。"),
    ("2026-11-03", LONG, None, "agent", "export messaging",
     "When customers ask about scheduled exports, say they are planned for 2027 without a fixed "
     "date."),
    ("2026-11-20", LONG, None, "agent", "feedback export",
     "Scheduled exports have the most votes in FEEDBACK (12 as of 2026-11-20)."),
    ("", LONG, None, "agent", "metrics",
     "Metrics I check weekly: active teams, export success rate, first response time and "
     "churned accounts."),
    ("2026-08-25", LONG, None, "agent", "legal kestrel",
     "Kestrel Health's DPA renewal needs legal review before 2027-02-01."),
    ("", LONG, None, "agent", "roadmap 翻译",
     "路线图对外沟通用中英文两个版本，中文版由王磊和陈静校对。"),
    ("", LONG, None, "agent", "team", "Tom Becker is the only full-time SRE at Harbor Labs."),
    ("", LONG, None, "agent", "jira epics",
     "I write Jira epics with a one-paragraph problem statement and explicit non-goals."),
    ("2026-09-30", LONG, "roadmap-q4", "meeting", "roadmap",
     "Q4 roadmap draft: CSV export in v2.8, Kafka notification retries in v2.9, an Excel export "
     "spike in December."),
    ("2026-11-02", LONG, "roadmap-q4", "meeting", "roadmap 报表",
     "Q4 路线图更新：自定义报表推迟到 2027 年一季度，Excel 导出提前。"),
    ("2026-11-03", SHORT, "roadmap-q4", "agent", "roadmap estimate",
     "Need Arjun Rao's estimate for Excel export before publishing the roadmap update."),
    ("2026-11-04", WORKING, "roadmap-q4", "agent", "roadmap email",
     "Drafting the customer-facing roadmap email; still waiting for the Chinese version from "
     "陈静."),
    ("2026-10-28", LONG, "call-bluefin-2026-10-28", "meeting", "customer bluefin",
     "Call with Dana Whitfield: Bluefin is happy with CSV export and wants scheduled exports "
     "before their renewal."),
    ("2026-11-12", LONG, "call-haiou-2026-11-12", "meeting", "客户 海鸥物流",
     "和海鸥物流周博通话：对 INC-250 的处理表示理解，希望导出任务排队时能看到预计等待时间。"),
    ("2026-11-18", LONG, "call-kestrel-2026-11-18", "meeting", "customer kestrel sso",
     "Call with Helen Park: Kestrel Health wants SAML certificate rotation to be self-service."),
    ("2026-11-27", WORKING, None, "agent", "digest",
     "Preparing the November customer digest; highlights are v2.9.0, the Loki migration and "
     "three closed incidents."),
    ("2026-11-26", SHORT, None, "agent", "todo",
     "This week: confirm the Bluefin renewal call date and review the year-end freeze plan."),
    ("2026-11-20", SHORT, None, "agent", "feedback excel",
     "FEEDBACK 项目里 Excel 导出已有 9 票，排在第二位。"),
)

# --- Sessions ---------------------------------------------------------------------------------

# (session_id, user_id, agent_id, created_at, messages); a message is (role, content) or
# (role, content, seconds since the previous message) when the gap matters for the story.
SESSIONS = (
    ("sess-support-0001", NS_SUPPORT, "support-bot", "2026-09-03T14:05:00+00:00", (
        ("system", "You are Harbor Labs' support assistant. Be concise, cite ticket numbers and "
         "never promise release dates."),
        ("user", "Hi, this is Dana from Bluefin Logistics. Our CSV exports keep timing out."),
        ("assistant", "Sorry about that, Dana. Roughly how many rows do the failing exports have, "
         "and which report are you exporting from?"),
        ("user", "The shipments report, about 80k rows for August. Anything under 40k seems "
         "fine."),
        ("assistant", "Thanks. Exports are currently built in a single request with a 30-second "
         "limit, so very large reports can hit it. I've opened SUP-1042 for you."),
        ("user", "Is there a workaround? Finance needs the file by Friday."),
        ("assistant", "You can filter the report by week and export each week separately; each "
         "file should stay under the limit. I'll also ask the team about handling larger "
         "exports."),
        ("user", "OK, weekly files will work for now. Please keep me posted."),
        ("assistant", "Will do. I'll update SUP-1042 as soon as there is news about larger "
         "exports."),
    )),
    ("sess-support-0002", NS_SUPPORT, "support-bot", "2026-10-14T02:30:00+00:00", (
        ("system", "你是 Harbor Labs 的客服助手。请用客户使用的语言回复，语气礼貌、简洁。"),
        ("user", "你好，我是青山零售的刘芳。听说 VIP 续费改成自动扣款了？"),
        ("assistant", "刘女士您好！是的，VIP 客户续费现在默认自动扣款，扣款前 7 天会发邮件提醒。"),
        ("user", "我们公司一般走对公转账，可以吗？"),
        ("assistant", "目前自动扣款只支持信用卡和支付宝。如果需要对公转账，可以在续费前改为人工开票处理。"),
        ("user", "那扣款失败会怎么样？会不会直接停服？"),
        ("assistant", "不会立即停服。扣款失败后系统会再重试，连续三次失败会转给客户经理人工跟进，"
         "期间服务照常使用。"),
        ("user", "好的。我们的合同 12 月 1 日到期，请帮我改成对公转账。"),
        ("assistant", "已记录，工单号 SUP-1061。客户经理会在 11 月中旬联系您确认开票信息。"),
        ("user", "谢谢！"),
        ("assistant", "不客气，祝您工作顺利！"),
    )),
    ("sess-support-0003", NS_SUPPORT, "support-bot", "2026-09-17T03:31:00+00:00", (
        ("system", "你是 Harbor Labs 的客服助手。事故期间只引用 #incidents 频道的官方状态，"
         "不要猜测恢复时间。"),
        ("user", "你们系统是不是出问题了？我们仓库的同事全部登录不了。"),
        ("assistant", "非常抱歉给您带来影响。我们已确认从 03:10 UTC 起出现登录异常，工程团队正在处理，"
         "事故编号 INC-231。"),
        ("user", "大概什么时候能恢复？早班 8 点要开始发货。"),
        ("assistant", "目前还没有确定的恢复时间，我不能随意承诺。状态页会实时更新，恢复后我也会第一时间"
         "通知您。"),
        ("user", "已经登录的人会不会被踢出来？"),
        ("assistant", "已经登录的用户也可能因为会话丢失需要重新登录，建议暂时不要刷新当前页面。"),
        ("user", "好，请尽快。"),
        ("assistant", "更新：工程团队已清理异常数据，登录已于 03:50 UTC 恢复。请让同事重新登录试试。",
         960),
        ("user", "可以登录了，谢谢。之后请给我们一份事故报告。"),
        ("assistant", "好的，已记录在 SUP-1047，中文事故报告会在两个工作日内发给您。"),
    )),
    ("sess-support-0004", NS_SUPPORT, "support-bot", "2026-11-14T22:40:00+00:00", (
        ("system", "You are Harbor Labs' support assistant. For SSO issues, collect the identity "
         "provider and the exact error message before escalating."),
        ("user", "This is Helen Park at Kestrel Health. None of our staff can sign in through "
         "SSO since about 22:00."),
        ("assistant", "Sorry for the disruption, Helen. Which identity provider do you use, and "
         "what error do people see?"),
        ("user", "We use Okta. The error says 'SAML response signature invalid'."),
        ("assistant", "Thank you. Did your team rotate the SAML signing certificate recently?"),
        ("user", "Our IT team rotated it this evening, yes."),
        ("assistant", "That explains it: Harbor still has the old certificate on file. If you "
         "send the new certificate or the updated metadata, our on-call engineer can update it "
         "right away."),
        ("user", "Sending the metadata XML now."),
        ("assistant", "Received, thanks. I've attached it to SUP-1075 and paged the on-call "
         "engineer."),
        ("assistant", "Update: the new certificate is in place and SSO logins have worked again "
         "since 23:05 UTC. Could you ask a colleague to try?", 1080),
        ("user", "Confirmed, it works. Can you accept both certificates next time so this "
         "doesn't happen again?"),
        ("assistant", "That's a fair request. I've passed it to the team as a follow-up for "
         "INC-255."),
    )),
    ("sess-support-0005", NS_SUPPORT, "support-bot", "2026-10-29T06:10:00+00:00", (
        ("system", "你是 Harbor Labs 的客服助手。请用客户使用的语言回复。"),
        ("user", "你好，我们导出的 CSV 用 Excel 打开全是乱码，怎么回事？"),
        ("assistant", "您好！这是 v2.8.0 的一个已知问题：导出文件缺少 UTF-8 BOM，Excel 会用错误的"
         "编码打开中文。"),
        ("user", "那要怎么处理？我们下午要给校长看报表。"),
        ("assistant", "修复已随今天发布的 v2.8.1 上线，请重新导出一次即可。如果着急，也可以在 Excel "
         "里通过「数据 → 从文本/CSV」选择 UTF-8 编码导入。"),
        ("user", "重新导出了，现在正常了。另外能不能导出成 Excel 格式，按校区分 sheet？"),
        ("assistant", "Excel 导出目前在规划中。按校区拆分工作表的需求我们之前已记录为 FEEDBACK-88，"
         "会一并评估。"),
        ("user", "有大概的时间吗？"),
        ("assistant", "暂时还没有确定的时间，我不能承诺具体日期。有进展时我们会邮件通知您。"),
        ("user", "好的，谢谢。"),
    )),
    ("sess-ops-0001", NS_OPS, "ops-bot", "2026-09-21T08:02:00+00:00", (
        ("system", "You are ops-bot for Harbor Labs. During on-call handovers, summarize open "
         "alerts, ongoing changes and customers to watch."),
        ("user", "Tom here, handing over on-call to Arjun. Can you summarize last week?"),
        ("assistant", "Last week had one P1: INC-231 on 2026-09-17, Redis evictions caused login "
         "failures for about 40 minutes. Follow-ups: session TTL capped at 7 days and a Redis "
         "memory alert at 80%. No other open incidents."),
        ("user", "Anything still firing?"),
        ("assistant", "One warning: disk usage on log-node-2 is at 72%. Redis memory is stable "
         "at 55%."),
        ("user", "Arjun, the new Redis alert may be noisy for a few days. If it fires below 85%, "
         "just acknowledge it."),
        ("user", "Arjun here. Got it. Any customers I should watch?"),
        ("assistant", "海鸥物流 was hit hardest by INC-231. They received the Chinese incident "
         "report on 2026-09-19 and now expect a monthly stability report."),
        ("user", "Thanks, I have it from here."),
        ("assistant", "Handover recorded in #ops. Arjun Rao is primary on-call until 2026-09-28 "
         "08:00 UTC."),
    )),
    ("sess-ops-0002", NS_OPS, "ops-bot", "2026-09-17T03:14:00+00:00", (
        ("system", "You are ops-bot for Harbor Labs. During incidents, keep a timeline and "
         "suggest runbook steps; never run destructive commands yourself."),
        ("user", "Paged for Redis memory and login errors are spiking. What do we know?"),
        ("assistant", "Redis memory hit 95% at 03:10 UTC and evictions are rising. The auth "
         "error rate is 38%. The runbook says to look for keys without a TTL before "
         "restarting."),
        ("user", "Running --bigkeys now. Open INC-231 and post in #incidents."),
        ("assistant", "INC-231 is open as P1 and the channel is created. Status page set to "
         "'Investigating'."),
        ("user", "Found about 9M session keys with no TTL. Looks like the August config change.",
         360),
        ("assistant", "Noted in the timeline. Option: set a 7-day TTL on session keys with a "
         "batched script, then delete sessions older than 30 days. Want the script from the "
         "runbook?"),
        ("user", "Yes. Running it in batches of 10k.", 390),
        ("assistant", "Memory is dropping: 95% to 71% after the first pass. The auth error rate "
         "is down to 4%.", 720),
        ("user", "Logins look fine now. Mark it as monitoring.", 420),
        ("assistant", "Status page set to 'Monitoring'. I'll draft the postmortem with the "
         "timeline and list Tom Becker as the owner.", 50),
    )),
    ("sess-ops-0003", NS_OPS, "ops-bot", "2026-10-09T09:20:00+00:00", (
        ("system", "你是 Harbor Labs 的运维助手 ops-bot。回答要引用运维手册，不确定时请转给值班工程师。"),
        ("user", "下周一计费库切换到 PostgreSQL 16，我需要做什么准备？"),
        ("assistant", "切换窗口是 2026-10-12 02:00–04:00 UTC。你负责的导出服务需要在窗口开始前暂停"
         "导出任务，并在切换后验证读写。"),
        ("user", "导出服务连的是只读副本，也要暂停吗？"),
        ("assistant", "要。切换期间 pg-billing-2 会重建复制，只读副本可能短暂不可用。建议在 01:45 UTC "
         "暂停导出队列。"),
        ("user", "好的。切换后怎么验证？"),
        ("assistant", "按运行手册第 6 步：执行导出冒烟测试（100 行和 10 万行各一次），并在 #ops 回复"
         "结果。这次切换的指挥人是 Arjun Rao。"),
        ("user", "旧库什么时候下线？"),
        ("assistant", "旧库保留只读 30 天，预计 2026-11-11 删除。"),
        ("user", "明白了，谢谢。"),
    )),
    ("sess-planning-0001", NS_TEAM, "planning-bot", "2026-10-12T09:00:00+00:00", (
        ("system", "You are planning-bot for the Harbor Labs product team. Help plan sprints "
         "from the backlog and the known capacity."),
        ("user", "Let's plan sprint 43. Goal: ship v2.8.0 with CSV export and finish the billing "
         "migration."),
        ("assistant", "Capacity check: Arjun Rao is at about 60% because of the migration "
         "on-call. 王磊, 陈静, Sofia Costa and Tom Becker are at full capacity, about 34 story "
         "points in total."),
        ("user", "What's left for CSV export?"),
        ("assistant", "Three items: the async export job queue (王磊, 5 points), the export "
         "progress indicator (Sofia Costa, 3 points) and the v2.8 regression run (陈静, 5 "
         "points)."),
        ("user", "Add the Chinese help article for export too."),
        ("assistant", "Added: Chinese help article for CSV export, owner 王磊, 2 points. The "
         "sprint is now at 31 points."),
        ("user", "Anything risky?"),
        ("assistant", "The regression run takes 3 days, so the release candidate must be ready "
         "by Monday 2026-10-19 for a Thursday 2026-10-22 release."),
        ("user", "OK, lock it in."),
        ("assistant", "Sprint 43 is planned: 8 items, 31 points, release target v2.8.0 on "
         "2026-10-22."),
    )),
    ("sess-planning-0002", NS_TEAM, "planning-bot", "2026-11-16T09:10:00+00:00", (
        ("system", "你是 Harbor Labs 团队的会议助手，负责整理周会纪要，列出决定、负责人和截止日期。"),
        ("user", "帮我整理一下今天周会的纪要。"),
        ("assistant", "好的，请告诉我今天讨论的主要议题。"),
        ("user", "一是 v2.9.0 周四发布，Kafka 重试主题一起上线；二是移动端冒烟测试自动化由我负责；"
         "三是数据库备份保留策略调整。"),
        ("assistant", "收到。备份策略具体怎么调整？"),
        ("user", "每日全量保留 14 天，每周全量保留 12 周，Tom 负责。还有，年底代码冻结从 12 月 14 日"
         "开始。"),
        ("assistant", "纪要草稿：\n1. v2.9.0 于 2026-11-19 发布，包含 Kafka 通知重试，负责人 "
         "Arjun Rao；\n2. 移动端冒烟测试自动化，负责人陈静；\n3. 备份保留策略改为每日全量 14 天、"
         "每周全量 12 周，负责人 Tom Becker；\n4. 年底代码冻结从 2026-12-14 开始，之后只修 P1。"),
        ("user", "第 2 条加一个截止日期：11 月 27 日。"),
        ("assistant", "已更新：移动端冒烟测试自动化，负责人陈静，截止 2026-11-27。需要发到 "
         "#team-harbor 频道吗？"),
        ("user", "发吧，顺便 @Mei Lin。"),
        ("assistant", "已发送到 #team-harbor，并提醒了 Mei Lin。"),
    )),
    ("sess-assistant-0001", NS_MEI, "pm-assistant", "2026-11-03T01:20:00+00:00", (
        ("system", "You are Mei Lin's product assistant at Harbor Labs. Follow her saved "
         "preferences: bullet points, owners and due dates."),
        ("user", "I need to publish the Q4 roadmap update this week. What changed since "
         "September?"),
        ("assistant", "- Custom report builder moved to Q1 2027\n- Excel export pulled forward: "
         "spike in December, owner 王磊\n- Kafka notification retries on track for v2.9.0 on "
         "2026-11-19, owner Arjun Rao\n- Loki log migration added for late November, owner Tom "
         "Becker"),
        ("user", "What are customers asking for most?"),
        ("assistant", "From FEEDBACK: scheduled exports (Bluefin Logistics and others), Excel "
         "export with one sheet per campus (星河教育) and annual billing for Starter plans "
         "(Maple & Rye Bakery)."),
        ("user", "Don't promise scheduled exports. Draft the email intro."),
        ("assistant", "Draft: \"This quarter we shipped one-off CSV export and moved billing to "
         "PostgreSQL 16. For the rest of the year we are focusing on notification reliability "
         "and groundwork for Excel export. Custom reports will arrive in early 2027.\""),
        ("user", "Good. Ask 陈静 for the Chinese version."),
        ("assistant", "Done: I sent 陈静 the draft on Slack and asked for the Chinese version by "
         "Wednesday."),
        ("user", "And remind me to get Arjun's estimate for Excel export."),
        ("assistant", "Reminder set for today at 15:00 SGT: get Arjun Rao's Excel export "
         "estimate before publishing."),
    )),
    ("sess-assistant-0002", NS_WANG, "dev-assistant", "2026-10-21T03:00:00+00:00", (
        ("system", "你是王磊的开发助手。回答尽量简洁，代码相关术语保留英文。"),
        ("user", "导出文件名有中文的时候，Safari 下载下来的文件名是乱码，怎么处理？"),
        ("assistant", "建议在 Content-Disposition 里同时提供 filename 和 filename*：filename 用 "
         "ASCII 兜底名，filename* 用 RFC 5987 的 UTF-8 百分号编码。"),
        ("user", "Django 里有现成的方法吗？"),
        ("assistant", "有。FileResponse(..., as_attachment=True, filename=name) 遇到非 ASCII "
         "文件名时会自动生成 filename*；如果手写 header，可以用 urllib.parse.quote 编码。"),
        ("user", "好。另外进度条卡在 99% 的问题，我怀疑是最后一批写完后没有更新状态。"),
        ("assistant", "很有可能。检查一下任务是否在文件上传完成后才把状态设为 completed；如果上传"
         "失败又没有重试，进度就会停在最后一批。"),
        ("user", "确实是上传后没更新状态，已经修好了。帮我提醒陈静评审。"),
        ("assistant", "好的。陈静通常周五下午集中做评审，不过 v2.8.0 周四发布，我会把这个 PR 标记为"
         "发布阻塞，请她今天处理。"),
        ("user", "谢谢。"),
    )),
)

# fmt: on

# --- Helpers ----------------------------------------------------------------------------------

_CJK = re.compile(r"[\u3400-\u9fff]")
_CJK_THEN_LATIN = re.compile(r"([\u3400-\u9fff])([A-Za-z0-9])")
_LATIN_THEN_CJK = re.compile(r"([A-Za-z0-9])([\u3400-\u9fff])")


def _language(text: str) -> str:
    """ "zh" for mostly Chinese text, "mixed" for English text with Chinese names, else "en"."""
    chinese = len(_CJK.findall(text))
    latin = sum(char.isascii() and char.isalpha() for char in text)
    if not chinese:
        return "en"
    return "zh" if chinese * 3 >= latin else "mixed"


def _zh(template: str, **slots: str) -> str:
    """Fill a Chinese template and put a space between Chinese and Latin text."""
    text = template.format(**slots)
    text = _CJK_THEN_LATIN.sub(r"\1 \2", text)
    return _LATIN_THEN_CJK.sub(r"\1 \2", text)


def _day(value: str | date) -> date:
    return value if isinstance(value, date) else date.fromisoformat(value)


def _at(rng: random.Random, day: str | date, first_hour: int = 1, last_hour: int = 16) -> str:
    """An ISO 8601 UTC timestamp on ``day`` at a random minute within working hours."""
    moment = datetime.combine(_day(day), time(tzinfo=UTC)) + timedelta(
        hours=rng.randint(first_hour, last_hour), minutes=rng.randint(0, 59)
    )
    return moment.isoformat()


def _after(rng: random.Random, moment: datetime, low_minutes: int, high_minutes: int) -> str:
    return (moment + timedelta(minutes=rng.randint(low_minutes, high_minutes))).isoformat()


def _random_day(rng: random.Random, first: date = FIRST_DAY, last: date = LAST_DAY) -> date:
    return first + timedelta(days=rng.randint(0, (last - first).days))


def _sprint_start(sprint: int) -> date:
    return SPRINT_38_START + timedelta(days=14 * (sprint - 38))


def _importance(rng: random.Random, base: float) -> float:
    return round(min(1.0, max(0.05, base + rng.uniform(-0.07, 0.07))), 2)


def _memory(
    rng: random.Random,
    *,
    user_id: str,
    content: str,
    author: str,
    source: str,
    created_at: str,
    base: float,
    conversation_id: str | None = None,
    type: str = LONG,
    tags: str | tuple[str, ...] = (),
    metadata: dict | None = None,
) -> dict:
    if isinstance(tags, str):
        tags = tuple(tags.split())
    meta = dict(metadata or {})
    meta["lang"] = _language(content)
    return {
        "user_id": user_id,
        "conversation_id": conversation_id,
        "type": type,
        "content": content,
        "importance": _importance(rng, base),
        "tags": list(tags[:3]),
        "source": source,
        "author": author,
        "created_at": created_at,
        "metadata": meta,
    }


def _prefers_chinese(rng: random.Random, person: str, zh_share: float = 0.15) -> bool:
    return rng.random() < (0.4 if person in CHINESE_SPEAKERS else zh_share)


# --- Builders ---------------------------------------------------------------------------------


def _team_memories(rng: random.Random) -> list[dict]:
    out = []
    for day, author, source, tags, content in TEAM_DECISIONS:
        out.append(
            _memory(
                rng,
                user_id=NS_TEAM,
                content=content,
                author=author,
                source=source,
                created_at=_at(rng, day, 8, 16),
                base=0.8,
                tags=("decision", *tags.split()),
                metadata={"kind": "decision"},
            )
        )
    for author, source, tags, content in TEAM_FACTS:
        out.append(
            _memory(
                rng,
                user_id=NS_TEAM,
                content=content,
                author=author,
                source=source,
                created_at=_at(rng, _random_day(rng, last=date(2026, 8, 31))),
                base=0.7,
                tags=tags,
            )
        )
    for person, source, tags, content in PREFERENCES:
        out.append(
            _memory(
                rng,
                user_id=NS_TEAM,
                content=content,
                author=person,
                source=source,
                created_at=_at(rng, _random_day(rng)),
                base=0.55,
                tags=tags,
                metadata={"person": person},
            )
        )
    for sprint, author, content in RETROS:
        day = _sprint_start(sprint) + timedelta(days=11)
        out.append(
            _memory(
                rng,
                user_id=NS_TEAM,
                content=content,
                author=author,
                source="meeting",
                created_at=_at(rng, day, 13, 14),
                base=0.6,
                conversation_id=f"retro-sprint-{sprint}",
                tags="retro",
                metadata={"sprint": sprint},
            )
        )
    base_by_type = {LONG: 0.6, SHORT: 0.4, WORKING: 0.25}
    for sprint, kind, author, content in PLANNING:
        out.append(
            _memory(
                rng,
                user_id=NS_TEAM,
                content=content,
                author=author,
                source="meeting",
                created_at=_at(rng, _sprint_start(sprint), 9, 10),
                base=base_by_type[kind],
                conversation_id=f"planning-sprint-{sprint}",
                type=kind,
                tags="planning",
                metadata={"sprint": sprint},
            )
        )
    for day, version, author, content in RELEASES:
        out.append(
            _memory(
                rng,
                user_id=NS_TEAM,
                content=content,
                author=author,
                source="jira",
                created_at=_at(rng, day, 10, 16),
                base=0.7,
                tags=("release", version),
                metadata={"version": version},
            )
        )
    out += _weekly_memories(rng)
    out += _standup_memories(rng)
    return out


def _weekly_memories(rng: random.Random) -> list[dict]:
    out = []
    for day, owner, item_en, item_zh in WEEKLY_ACTIONS:
        due = _day(day) + timedelta(days=11)
        if _prefers_chinese(rng, owner, 0.2):
            template = rng.choice(WEEKLY_TEMPLATES_ZH)
            content = _zh(template, owner=owner, item=item_zh, due=f"{due.month}月{due.day}日")
        else:
            template = rng.choice(WEEKLY_TEMPLATES_EN)
            content = template.format(owner=owner, item=item_en, due=due.strftime("%a %d %b"))
        out.append(
            _memory(
                rng,
                user_id=NS_TEAM,
                content=content,
                author=MEI,
                source="meeting",
                created_at=_at(rng, day, 9, 10),
                base=0.6,
                conversation_id=f"weekly-{day}",
                tags="weekly action-item",
                metadata={"meeting": "weekly", "owner": owner},
            )
        )
    return out


def _standup_days() -> list[tuple[int, date]]:
    days = []
    for sprint in range(38, 47):
        for offset in (1, 7):  # Tuesday of week one, Monday of week two
            day = _sprint_start(sprint) + timedelta(days=offset)
            if day <= LAST_DAY:
                days.append((sprint, day))
    return days


def _standup_memories(rng: random.Random) -> list[dict]:
    out = []
    used: set[tuple[str, str]] = set()
    for sprint, day in _standup_days():
        tasks = [task for task in STANDUP_TASKS if task[0] == sprint]
        first_of_sprint = day.weekday() == 1  # nobody has finished anything on day two
        for _, person, task_en, task_zh in rng.sample(tasks, min(len(tasks), rng.choice((2, 3)))):
            other = rng.choice([p for p in PEOPLE if p != person])
            if _prefers_chinese(rng, person, 0.1):
                templates, task = STANDUP_TEMPLATES_ZH, task_zh
            else:
                templates, task = STANDUP_TEMPLATES_EN, task_en
            allowed = [t for t in templates if t[3] or not first_of_sprint]
            fresh = [t for t in allowed if (t[0], task) not in used]
            template, kind, base, _ = rng.choice(fresh or allowed)
            used.add((template, task))
            if templates is STANDUP_TEMPLATES_ZH:
                content = _zh(template, person=person, task=task, other=other)
            else:
                content = template.format(person=person, task=task, other=other)
            out.append(
                _memory(
                    rng,
                    user_id=NS_TEAM,
                    content=content,
                    author=person,
                    source="meeting",
                    created_at=_at(rng, day, 8, 8),
                    base=base,
                    conversation_id=f"standup-{day.isoformat()}",
                    type=kind,
                    tags="standup" if rng.random() < 0.7 else (),
                    metadata={"sprint": sprint},
                )
            )
    return out


def _ops_memories(rng: random.Random) -> list[dict]:
    out = []
    severity_base = {"P1": 0.95, "P2": 0.85, "P3": 0.72}
    for inc, day, hhmm, sev, commander, service, summary, cause, follow_up in INCIDENTS:
        start = datetime.combine(_day(day), time.fromisoformat(hhmm), tzinfo=UTC)
        conv = f"incident-{inc}"
        base = severity_base[sev]
        out.append(
            _memory(
                rng,
                user_id=NS_OPS,
                content=summary,
                author=commander,
                source="slack",
                created_at=_after(rng, start, 15, 40),
                base=base,
                conversation_id=conv,
                tags=("incident", service, sev.lower()),
                metadata={"ticket": inc, "channel": "#incidents", "severity": sev},
            )
        )
        out.append(
            _memory(
                rng,
                user_id=NS_OPS,
                content=cause,
                author=commander,
                source="jira",
                created_at=_after(rng, start, 20 * 60, 30 * 60),
                base=base - 0.05,
                conversation_id=conv,
                tags=("postmortem", service),
                metadata={"ticket": inc, "severity": sev},
            )
        )
        out.append(
            _memory(
                rng,
                user_id=NS_OPS,
                content=follow_up,
                author=commander,
                source="jira",
                created_at=_after(rng, start, 44 * 60, 56 * 60),
                base=base - 0.1,
                conversation_id=conv,
                tags=("action-item", service),
                metadata={"ticket": inc},
            )
        )
    starts = {inc: (day, hhmm) for inc, day, hhmm, *_ in INCIDENTS}
    for inc, kind, author, content in INCIDENT_NOTES:
        day, hhmm = starts[inc]
        start = datetime.combine(_day(day), time.fromisoformat(hhmm), tzinfo=UTC)
        out.append(
            _memory(
                rng,
                user_id=NS_OPS,
                content=content,
                author=author,
                source="agent",
                created_at=_after(rng, start, 45, 180),
                base=0.4,
                conversation_id=f"incident-{inc}",
                type=kind,
                tags="incident",
                metadata={"ticket": inc},
            )
        )
    for author, tags, content, day in OPS_RUNBOOK:
        out.append(
            _memory(
                rng,
                user_id=NS_OPS,
                content=content,
                author=author,
                source="slack" if day else "agent",
                created_at=_at(rng, day or _random_day(rng)),
                base=0.75,
                tags=tags,
                metadata={"channel": "#ops"},
            )
        )
    out += _handover_memories(rng)
    return out


def _handover_memories(rng: random.Random) -> list[dict]:
    out = []
    for index, (day, item_en, item_zh) in enumerate(HANDOVERS):
        outgoing = ONCALL_ROTATION[index % 3]
        incoming = ONCALL_ROTATION[(index + 1) % 3]
        secondary = ONCALL_ROTATION[(index + 2) % 3]
        conv = f"oncall-handover-{day}"
        meta = {"channel": "#ops", "oncall": incoming}
        chinese = _prefers_chinese(rng, outgoing, 0.2)
        if chinese:
            content = _zh(rng.choice(HANDOVER_TEMPLATES_ZH), a=outgoing, b=incoming, item=item_zh)
        else:
            content = rng.choice(HANDOVER_TEMPLATES_EN).format(a=outgoing, b=incoming, item=item_en)
        out.append(
            _memory(
                rng,
                user_id=NS_OPS,
                content=content,
                author=outgoing,
                source="slack",
                created_at=_at(rng, day, 8, 8),
                base=0.45,
                conversation_id=conv,
                type=SHORT,
                tags="oncall handover",
                metadata=meta,
            )
        )
        if rng.random() < 0.5:
            if chinese:
                roster = _zh("本周主值班：{b}，副值班：{c}。", b=incoming, c=secondary)
            else:
                roster = f"{incoming} is primary on-call this week and {secondary} is secondary."
            out.append(
                _memory(
                    rng,
                    user_id=NS_OPS,
                    content=roster,
                    author=outgoing,
                    source="agent",
                    created_at=_at(rng, day, 9, 9),
                    base=0.3,
                    conversation_id=conv,
                    type=SHORT,
                    tags="oncall",
                    metadata=meta,
                )
            )
    return out


def _support_memories(rng: random.Random) -> list[dict]:
    out = []
    for name, plan, contact, lang, renewal, channel_en, channel_zh, note_day, note in CUSTOMERS:
        meta = {"customer": name}
        if lang == "zh":
            profile = _zh(
                PROFILE_TEMPLATE_ZH,
                name=name,
                plan=PLAN_ZH[plan],
                contact=contact,
                channel=channel_zh,
            )
        else:
            profile = PROFILE_TEMPLATE_EN.format(
                name=name, plan=plan, contact=contact, channel=channel_en
            )
        if rng.random() < (0.7 if lang == "zh" else 0.15):
            renewal_note = _zh(RENEWAL_TEMPLATE_ZH, name=name, renewal=renewal, contact=contact)
        else:
            renewal_note = RENEWAL_TEMPLATE_EN.format(name=name, renewal=renewal, contact=contact)
        first_seen = _random_day(rng, last=date(2026, 8, 20))
        out.append(
            _memory(
                rng,
                user_id=NS_SUPPORT,
                content=profile,
                author=SOFIA,
                source="agent",
                created_at=_at(rng, first_seen),
                base=0.7,
                tags=("customer", plan.lower()),
                metadata=meta,
            )
        )
        out.append(
            _memory(
                rng,
                user_id=NS_SUPPORT,
                content=renewal_note,
                author=MEI,
                source="agent",
                created_at=_at(rng, first_seen + timedelta(days=3)),
                base=0.75,
                tags="customer renewal",
                metadata=meta,
            )
        )
        out.append(
            _memory(
                rng,
                user_id=NS_SUPPORT,
                content=note,
                author=SOFIA,
                source="agent",
                created_at=_at(rng, note_day),
                base=0.65,
                tags="customer",
                metadata=meta,
            )
        )
    for ticket, day, author, customer, kind, content in TICKETS:
        meta = {"ticket": ticket, "customer": customer} if customer else {"ticket": ticket}
        out.append(
            _memory(
                rng,
                user_id=NS_SUPPORT,
                content=content,
                author=author,
                source="jira",
                created_at=_at(rng, day),
                base=0.6 if kind == LONG else 0.45,
                conversation_id=f"ticket-{ticket}",
                type=kind,
                tags=("ticket",) if rng.random() < 0.6 else (),
                metadata=meta,
            )
        )
    for author, tags, content in SUPPORT_FACTS:
        out.append(
            _memory(
                rng,
                user_id=NS_SUPPORT,
                content=content,
                author=author,
                source="agent",
                created_at=_at(rng, _random_day(rng)),
                base=0.7,
                tags=("playbook", *tags.split()),
            )
        )
    for day, kind, conv, author, content in SUPPORT_SCRATCH:
        out.append(
            _memory(
                rng,
                user_id=NS_SUPPORT,
                content=content,
                author=author,
                source="agent",
                created_at=_at(rng, day),
                base=0.3,
                conversation_id=conv,
                type=kind,
            )
        )
    return out


def _personal_memories(rng: random.Random, user_id: str, author: str, notes: tuple) -> list[dict]:
    out = []
    base_by_type = {LONG: 0.6, SHORT: 0.4, WORKING: 0.25}
    for day, kind, conv, source, tags, content in notes:
        out.append(
            _memory(
                rng,
                user_id=user_id,
                content=content,
                author=author,
                source=source,
                created_at=_at(rng, day or _random_day(rng)),
                base=base_by_type[kind],
                conversation_id=conv,
                type=kind,
                tags=tags,
            )
        )
    return out


def _dedupe(memories: list[dict]) -> list[dict]:
    seen: set[tuple] = set()
    out = []
    for memory in memories:
        key = (memory["user_id"], memory["conversation_id"], memory["type"], memory["content"])
        if key not in seen:
            seen.add(key)
            out.append(memory)
    return out


# --- Public API -------------------------------------------------------------------------------


def demo_memories() -> list[dict]:
    """About 350 fictional memories across five namespaces, oldest first."""
    rng = random.Random(42)
    memories = (
        _team_memories(rng)
        + _ops_memories(rng)
        + _support_memories(rng)
        + _personal_memories(rng, NS_WANG, WANG, WANG_NOTES)
        + _personal_memories(rng, NS_MEI, MEI, MEI_NOTES)
    )
    # Drawn last, so the rest of the data stays as it was without them.
    memories += [
        _memory(rng, user_id=user_id, content=content, author=author, source="agent",
                created_at=_at(rng, day), base=0.55, tags=tags)
        for user_id, day, author, tags, content in NEAR_DUPLICATES
    ]
    memories = _dedupe(memories)
    memories.sort(key=lambda m: (m["created_at"], m["user_id"], m["content"]))
    return memories


def demo_sessions() -> list[dict]:
    """Twelve fictional agent conversations (support, on-call, planning, assistants)."""
    rng = random.Random(42)
    sessions = []
    for session_id, user_id, agent_id, created_at, script in SESSIONS:
        moment = datetime.fromisoformat(created_at)
        messages = []
        for index, (role, content, *gap) in enumerate(script):
            if index:
                if gap:
                    seconds = gap[0]
                elif role == "user":
                    seconds = rng.randint(25, 150)
                else:
                    seconds = rng.randint(4, 30)
                moment += timedelta(seconds=seconds)
            messages.append({"role": role, "content": content, "at": moment.isoformat()})
        sessions.append(
            {
                "session_id": session_id,
                "user_id": user_id,
                "agent_id": agent_id,
                "created_at": created_at,
                "messages": messages,
            }
        )
    return sessions
