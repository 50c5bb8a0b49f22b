"""Does the supersession detector generalise? A fresh adversarial set written for that question,
with people, companies, systems and wording that the dev set does not use: full names sharing a
first name, possessors, "the <name> service", "the meeting with <who>", ticket ids, settings,
prices, dates, statuses, and hard negatives (compatible facts, another subject with the same
attribute, plans, questions, hedges, paraphrases, two different tickets / meetings / projects).

Precision first: in a namespace a false slot collision ends a true fact. Asserted over the whole
set: pair precision >= 0.95, recall >= 0.6 (docs/benchmarks.md, supersession_detector, has the
figures, per language, before and after the rules were generalised).
"""

import pytest

from memories.supersession import evaluation

# name -> (memories in time order, expected (newer, older) pairs); memories are keyed a, b, c, …
FRESH = {
    # English, positives
    "en-full-name-moved": (["Ana Silva lives in Porto.", "Ana Silva moved to Madrid in April."],
                           [("b", "a")]),
    "en-full-name-employer": (["Maria Lopez works at Initech.", "Maria Lopez joined Globex in March."],
                              [("b", "a")]),
    "en-possessed-version": (["Ana's laptop runs version 2.3.", "Ana's laptop now runs version 2.4."],
                             [("b", "a")]),
    "en-named-service-version": (["The billing service runs version 2.3 in production.",
                                  "The billing service was upgraded to version 2.4 in production."],
                                 [("b", "a")]),
    "en-meeting-with-moved": (["The meeting with Acme is on Tuesday.",
                               "The meeting with Acme moved to Thursday."], [("b", "a")]),
    "en-wifi-password": (["The wifi password is tiger42.", "The wifi password changed to lion77."],
                         [("b", "a")]),
    "en-ticket-handed": (["PAY-311 is assigned to Rahul.", "PAY-311 was handed over to Ingrid."],
                         [("b", "a")]),
    "en-plan-price": (["The Starter plan costs $19 a month.",
                       "The Starter plan price was raised to $24 a month."], [("b", "a")]),
    "en-project-status": (["Project Falcon's status is on hold.", "Project Falcon's status is now active."],
                          [("b", "a")]),
    "en-full-name-engaged": (["Olivia Park is single.", "Olivia Park got engaged in June."], [("b", "a")]),
    "en-full-name-manager": (["Diego Ramos's manager is Helen Wu.",
                              "Diego Ramos's manager is now Peter Obi."], [("b", "a")]),
    "en-portal-limit": (["The upload limit for the support portal is 10 MB.",
                         "Raised the upload limit for the support portal to 25 MB."], [("b", "a")]),
    "en-board-review": (["The Q3 board review is on September 14.",
                         "The Q3 board review was postponed to September 21."], [("b", "a")]),
    "en-dialogue-moved": (["Farah: I live in Leeds with my sister.",
                           "Farah: I moved to Bristol in the spring."], [("b", "a")]),
    "en-on-call-team": (["Greta is on-call for payments.", "Jonas is now on-call for payments."],
                        [("b", "a")]),
    "en-kickoff-of-project": (["The kickoff of Project Orion is on May 6.",
                               "The kickoff of Project Orion moved to May 13."], [("b", "a")]),
    "en-team-lead": (["The search team's lead is Priya.", "The search team's lead is now Omar."],
                     [("b", "a")]),
    # English, hard negatives
    "en-two-anas": (["Ana Silva lives in Porto.", "Ana Ng lives in Madrid."], []),
    "en-two-marias": (["Maria Lopez works at Initech.", "Maria Chen works at Globex."], []),
    "en-two-laptops": (["Ana's laptop runs version 2.3.", "Bob's laptop runs version 2.4."], []),
    "en-two-services": (["The billing service runs version 2.3 in production.",
                         "The search service runs version 2.4 in production."], []),
    "en-two-meetings": (["The meeting with Acme is on Tuesday.", "The meeting with Initech is on Friday."],
                        []),
    "en-two-servers": (["The mail server's IP is 10.0.0.5.", "The build server's IP is 10.0.0.9."], []),
    "en-two-team-offices": (["The design team's office is on floor 3.",
                             "The sales team's office is on floor 5."], []),
    "en-two-project-deadlines": (["The deadline of Project Atlas is June 30.",
                                  "The deadline of Project Borealis is July 15."], []),
    "en-two-tickets": (["HR-14 is assigned to Lucia.", "HR-15 is assigned to Marco."], []),
    "en-two-pablos-phones": (["Pablo Ortiz's phone number is 555-0134.",
                              "Pablo Ruiz's phone number is 555-0199."], []),
    "en-two-toms-desks": (["Tom Reed's desk is on floor 2.", "Tom Baker's desk is on floor 6."], []),
    "en-two-environments": (["The checkout service runs version 5.1 in staging.",
                             "The checkout service runs version 5.0 in production."], []),
    "en-plan-to-join": (["Nadia works at Siemens.", "Nadia plans to join Bosch next year."], []),
    "en-port-question": (["The VPN port is 1194.", "Is the VPN port 443 now?"], []),
    "en-hedged-move": (["Carlos lives in Lima.", "Carlos will probably move to Cusco."], []),
    "en-password-paraphrase": (["The wifi password is tiger42.", "The password for the wifi is tiger42."],
                               []),
    "en-two-languages": (["Ingrid speaks Norwegian.", "Ingrid speaks German too."], []),
    "en-plan-then-report": (["Lars will join Nokia in May.", "Lars joined Nokia."], []),
    # Chinese, positives
    "zh-compound-surname-moved": (["欧阳娜娜住在杭州。", "欧阳娜娜搬到了上海。"], [("b", "a")]),
    "zh-job-hop": (["司马光在华为做工程师。", "司马光跳槽到了小米。"], [("b", "a")]),
    "zh-service-version": (["订单服务的版本是 3.1。", "订单服务的版本升级为 3.2。"], [("b", "a")]),
    "zh-wifi-password": (["无线网密码是 tiger42。", "无线网密码改成了 lion77。"], [("b", "a")]),
    "zh-meeting-with": (["和腾讯云的评审会定在 5 月 6 日。", "和腾讯云的评审会推迟到 5 月 9 日。"], [("b", "a")]),
    "zh-ticket": (["工单 CRM-210 由赵工负责。", "CRM-210 转给钱工处理。"], [("b", "a")]),
    "zh-price": (["企业版价格是 999 元。", "企业版价格调整为 1299 元。"], [("b", "a")]),
    "zh-phone": (["诸葛明的手机号是 138 1111 2222。", "诸葛明的手机号换成了 139 3333 4444。"], [("b", "a")]),
    "zh-married": (["上官婉目前单身。", "上官婉去年结婚了。"], [("b", "a")]),
    "zh-manager": (["林小雨的上级是王总。", "林小雨的上级换成了李总。"], [("b", "a")]),
    "zh-connection-limit": (["测试环境的连接数上限是 100 个。", "测试环境的连接数上限调整为 200 个。"],
                            [("b", "a")]),
    "zh-checkup-date": (["年度体检定在 4 月 20 日。", "年度体检改到 4 月 27 日。"], [("b", "a")]),
    "zh-project-status": (["雷达项目的状态是暂停。", "雷达项目的状态改为进行中。"], [("b", "a")]),
    "zh-mother-moved": (["陈静的妈妈住在长沙。", "陈静的妈妈搬到了广州。"], [("b", "a")]),
    "zh-email": (["慕容雪的邮箱是 mrx@a.cn。", "慕容雪的邮箱改为 mrx@b.cn。"], [("b", "a")]),
    "zh-macbook-version": (["张伟的 MacBook 系统版本是 14.2。", "张伟的 MacBook 系统已升级到 14.5。"],
                           [("b", "a")]),
    # Chinese, hard negatives
    "zh-two-wangs": (["王小明住在北京。", "王小红住在上海。"], []),
    "zh-two-ouyangs": (["欧阳娜娜住在杭州。", "欧阳锋住在大理。"], []),
    "zh-two-macbooks": (["张伟的 MacBook 系统版本是 14.2。", "李娜的 MacBook 系统版本是 14.5。"], []),
    "zh-two-services-redis": (["支付服务的 Redis 版本是 6.2。", "搜索服务的 Redis 版本是 7.0。"], []),
    "zh-two-meetings": (["和腾讯云的评审会定在 5 月 6 日。", "和阿里云的评审会定在 5 月 9 日。"], []),
    "zh-two-tickets": (["工单 CRM-210 由赵工负责。", "工单 CRM-211 由钱工负责。"], []),
    "zh-two-project-deadlines": (["天鹅项目的截止日期是 6 月 30 日。", "猎鹰项目的截止日期是 7 月 15 日。"],
                                 []),
    "zh-two-team-offices": (["设计团队的办公室在 3 楼。", "销售团队的办公室在 5 楼。"], []),
    "zh-plan-to-join": (["秦风在百度工作。", "秦风计划下个月加入京东。"], []),
    "zh-password-question": (["无线网密码是 tiger42。", "无线网密码改成 lion77 了吗？"], []),
    "zh-hedged-move": (["韩梅住在青岛。", "韩梅也许会搬到济南。"], []),
    "zh-price-paraphrase": (["企业版价格是 999 元。", "企业版的价格为 999 元。"], []),
    "zh-two-languages": (["李雷会说日语。", "李雷也会说法语。"], []),
    "zh-two-environments": (["测试环境的连接数上限是 100 个。", "生产环境的连接数上限是 500 个。"], []),
    "zh-colleague-elsewhere": (["周杰住在深圳。", "周杰的同事住在东莞。"], []),
    "zh-two-simas": (["司马光在华为做工程师。", "司马懿在小米做工程师。"], []),
    "zh-two-zhuges-phones": (["诸葛明的手机号是 138 1111 2222。", "诸葛亮的手机号是 139 3333 4444。"], []),
    "zh-two-server-ips": (["北京机房服务器的 IP 是 10.0.0.5。", "上海机房服务器的 IP 是 10.0.0.9。"], []),
}

# A second batch written after the rules were generalised and run once as written, to see whether
# the fixes carry over to wording they were not made on (its figures are reported apart).
FRESH_AFTER = {
    "en-full-name-phone-changed": (["Kenji Watanabe's phone number is 555-0188.",
                                    "Kenji Watanabe's phone number changed to 555-0107."], [("b", "a")]),
    "en-two-kenjis-phones": (["Kenji Watanabe's phone number is 555-0188.",
                              "Kenji Sato's phone number is 555-0107."], []),
    "en-first-name-after-full-name": (["Rosa Diaz lives in Quito.", "Rosa moved to Lima."], [("b", "a")]),
    "en-gateway-version": (["The API gateway runs version 1.8 in staging.",
                            "The API gateway in staging was upgraded to version 1.9."], [("b", "a")]),
    "en-two-gateways": (["The public gateway runs version 1.8.", "The internal gateway runs version 2.1."],
                        []),
    "en-team-office-moved": (["The data team's office is in Building C.",
                              "The data team's office moved to Building F."], [("b", "a")]),
    "en-two-owners-cars": (["Ravi's car is a Volvo.", "Meena's car is a Kia."], []),
    "en-one-on-one-moved": (["The one-on-one with Sofia is on Monday at 10am.",
                             "The one-on-one with Sofia moved to Wednesday at 10am."], [("b", "a")]),
    "en-two-standups": (["The standup with the mobile team is at 9am.",
                         "The standup with the web team is at 10am."], []),
    "en-two-tickets-owned": (["SUP-902 is owned by Hana.", "SUP-920 is owned by Ivo."], []),
    "en-going-to-join": (["Leo works at Spotify.", "Leo is going to join Klarna in the autumn."], []),
    "en-door-code": (["The office door code is 4417#.", "The office door code is now 9082#."], [("b", "a")]),
    "en-two-door-codes": (["The garage door code is 1234.", "The office door code is 5678."], []),
    "en-price-of-tier": (["The price of the Premium tier is $30 a month.",
                          "The Premium tier now costs $35 a month."], [("b", "a")]),
    "en-brother-and-sister": (["Ana's brother lives in Faro.", "Ana lives in Braga."], []),
    "zh-full-name-phone-changed": (["宇文拓的手机号是 135 0000 1234。", "宇文拓的手机号改为 135 0000 5678。"],
                                   [("b", "a")]),
    "zh-two-yuwens-phones": (["宇文拓的手机号是 135 0000 1234。", "宇文泰的手机号是 135 0000 5678。"], []),
    "zh-gateway-version": (["网关服务的版本是 1.8。", "网关服务已经升级到 1.9 版本。"], [("b", "a")]),
    "zh-two-services-versions": (["用户服务的版本是 2.0。", "消息服务的版本是 2.1。"], []),
    "zh-team-office-moved": (["数据组的办公室在 6 楼。", "数据组的办公室换到了 8 楼。"], [("b", "a")]),
    "zh-two-owners-cars": (["老周的车是特斯拉。", "老吴的车是比亚迪。"], []),
    "zh-review-postponed": (["和京东的合同评审定在 3 月 8 日。", "和京东的合同评审推迟到 3 月 15 日。"],
                            [("b", "a")]),
    "zh-two-reviews": (["和京东的合同评审定在 3 月 8 日。", "和美团的合同评审定在 3 月 15 日。"], []),
    "zh-two-tickets": (["工单 SRE-41 由高工负责。", "工单 SRE-14 由韦工负责。"], []),
    "zh-preparing-move": (["袁媛住在重庆。", "袁媛准备下个月搬到成都。"], []),
    "zh-door-code": (["机房门禁密码是 8842#。", "机房门禁密码改为 1937#。"], [("b", "a")]),
    "zh-two-door-codes": (["机房门禁密码是 8842#。", "仓库门禁密码是 1937#。"], []),
    "zh-father-elsewhere": (["孟涛的爸爸住在西安。", "孟涛住在咸阳。"], []),
    "zh-price-cut": (["旗舰版的价格是 499 元。", "旗舰版降价了，现在是 399 元。"], [("b", "a")]),
}


def cases(table: dict | None = None) -> list[dict]:
    """A table (the fresh set by default) in the dev set's shape (`evaluation.score` reads it)."""
    out = []
    for name, (texts, expected) in (FRESH if table is None else table).items():
        keys = [chr(ord("a") + i) for i in range(len(texts))]
        out.append({"id": name, "lang": name[:2],
                    "memories": [{"key": k, "content": t} for k, t in zip(keys, texts, strict=True)],
                    "supersedes": [list(pair) for pair in expected]})
    return out


@pytest.fixture(scope="module")
def figures():
    return evaluation.score(cases())


def test_the_fresh_set_is_large_balanced_and_has_both_kinds():
    assert len(FRESH) >= 60
    for lang in ("en", "zh"):
        mine = [v for k, v in FRESH.items() if k.startswith(lang)]
        assert len(mine) >= 30
        assert any(expected for _, expected in mine) and any(not expected for _, expected in mine)


def test_precision_first_and_recall_on_fresh_wording(figures):
    overall = figures["all"]
    assert overall["precision"] >= 0.95, figures["errors"]
    assert overall["recall"] >= 0.6, figures["errors"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_language_on_fresh_wording(lang, figures):
    row = figures[lang]
    assert row["precision"] >= 0.90, [e for e in figures["errors"] if e[0].startswith(lang)]
    assert row["recall"] >= 0.5, [e for e in figures["errors"] if e[0].startswith(lang)]


def test_the_second_batch_keeps_precision_first():
    second = evaluation.score(cases(FRESH_AFTER))
    assert second["all"]["precision"] >= 0.95, second["errors"]
    assert second["all"]["recall"] >= 0.6, second["errors"]
