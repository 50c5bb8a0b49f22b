"""The supersession detector's rules on cases of our own (new people, subjects and wording, not
the dev set's), in English and Chinese, positives and hard negatives, plus the API's shapes."""

import json
import time

import pytest

from memories.supersession import Claim, Proposal, claims, pairs_for, propose, slot_keys

# (memories in time order, expected (newer, older) pairs)
HELD_OUT = {
    # English, positives
    "en-residence-moved": (["Priya lives in Toronto with two flatmates.",
                            "Priya moved to Vancouver in May."], [("b", "a")]),
    "en-employer-joined": (["Kofi works for Shopify as a product designer.",
                            "Kofi joined Stripe last week."], [("b", "a")]),
    "en-email-changed": (["Sven's email is sven@oldmail.io.",
                          "Sven's email address changed to sven@fjord.dev."], [("b", "a")]),
    "en-config-raised": (["The staging database timeout is 15 seconds.",
                          "Raised the staging database timeout to 45 seconds."], [("b", "a")]),
    "en-ticket-reassigned": (["DATA-77 (nightly export fails) is assigned to Yuki.",
                              "DATA-77 was reassigned to Pedro after the handover."], [("b", "a")]),
    "en-price-now": (["The Team plan costs $12 per user.",
                      "Team plan price is now $15 per user."], [("b", "a")]),
    "en-date-moved": (["The launch review is on March 3.",
                       "Launch review moved to March 10 because legal needs more time."],
                      [("b", "a")]),
    "en-version-deployed": (["Production is running ledger-api v1.4.2.",
                             "ledger-api v1.5.0 deployed to production after the freeze."],
                            [("b", "a")]),
    "en-relationship": (["Aiko is married to a sculptor.", "Aiko got divorced last year."],
                        [("b", "a")]),
    "en-manager-chain": (["Lena's manager is Tom Hardy.", "Lena's manager is now Ruth Baker.",
                          "Lena's manager is Ali Khan since the reorg."],
                         [("b", "a"), ("c", "b")]),
    "en-habit-stopped": (["Marta drinks coffee every morning.", "Marta no longer drinks coffee."],
                         [("b", "a")]),
    # English, hard negatives
    "en-two-likes": (["Felix likes jazz.", "Felix likes hip hop too."], []),
    "en-two-trips": (["Greta visited Rome in June.", "Greta visited Vienna in July."], []),
    "en-sister-elsewhere": (["Hugo lives in Lyon.", "Hugo's sister lives in Nice."], []),
    "en-question": (["Iris lives in Oslo.", "Is Iris still living in Oslo?"], []),
    "en-thinking-of-moving": (["Jamal lives in Cairo.", "Jamal is thinking about moving to Dubai."],
                              []),
    "en-phone-paraphrase": (["Kim's phone number is 555-0101.",
                             "Kim's mobile number is 555 0101, texts preferred."], []),
    "en-two-tickets": (["INFRA-5 is assigned to Olga.", "INFRA-9 is assigned to Ben."], []),
    "en-two-settings": (["Session expiry is 30 minutes.", "Token expiry is 2 hours."], []),
    "en-extra-role": (["Nils is the product owner for search.", "Nils also runs the guild meetings."],
                      []),
    # Chinese, positives
    "zh-residence-moved": (["赵云住在苏州工业园区。", "赵云已经搬到南京了。"], [("b", "a")]),
    "zh-employer": (["钱多多在腾讯做产品经理。", "钱多多在字节跳动做产品经理。"], [("b", "a")]),
    "zh-email": (["客户孙先生的邮箱是 sun@old.cn。", "孙先生的邮箱改为 sun@new.cn。"], [("b", "a")]),
    "zh-ticket": (["工单 NET-305（交换机掉线）由李工负责。", "NET-305 改由周工处理。"], [("b", "a")]),
    "zh-price": (["专业版价格是 99 元。", "专业版涨价了，现在是 129 元。"], [("b", "a")]),
    "zh-date": (["项目启动会定在 6 月 3 日。", "项目启动会推迟到 6 月 10 日。"], [("b", "a")]),
    "zh-version": (["线上环境 Nginx 版本是 1.22。", "线上环境 Nginx 已升级到 1.24。"], [("b", "a")]),
    "zh-relationship": (["黄忠目前单身。", "黄忠上个月结婚了。"], [("b", "a")]),
    "zh-habit-stopped": (["马超每周六去游泳馆游泳。", "马超不再去游泳馆了。"], [("b", "a")]),
    # Chinese, hard negatives
    "zh-two-likes": (["孔明喜欢吃川菜。", "孔明也喜欢吃粤菜。"], []),
    "zh-brother-elsewhere": (["赵云住在苏州。", "赵云的哥哥住在无锡。"], []),
    "zh-question": (["刘备住在成都。", "刘备还住在成都吗？"], []),
    "zh-plan": (["关羽住在荆州。", "关羽打算下个月搬去襄阳。"], []),
    "zh-two-meetings": (["周一下午和王总开预算会。", "周三上午和王总开招聘会。"], []),
    "zh-two-settings": (["会话过期时间是 30 分钟。", "令牌过期时间是 2 小时。"], []),
    "zh-two-tickets": (["工单 OPS-88 由陈工负责。", "工单 OPS-89 由林工负责。"], []),
    # A second batch, written blind after the rules above passed (32 of 35 passed as written).
    "en-residence-has-moved": (["Quentin lives in Galway.", "Quentin has moved to Cork for his PhD."],
                               [("b", "a")]),
    "en-based-relocated": (["Rosa is based in Mexico City.", "Rosa relocated to Monterrey in January."],
                           [("b", "a")]),
    "en-now-works": (["Sam works at Deloitte.", "Sam now works at KPMG as an auditor."], [("b", "a")]),
    "en-favourite-film": (["Tariq's favourite film is Alien.", "Tariq's favourite film is now Arrival."],
                          [("b", "a")]),
    "en-address": (["Uma's address is 12 Elm Street, Leeds.", "Uma's address changed to 4 Park Lane, York."],
                   [("b", "a")]),
    "en-rate-limit": (["The rate limit for the public API is 100 requests per minute.",
                       "Public API rate limit increased to 300 requests per minute."], [("b", "a")]),
    "en-demo-rescheduled": (["The sprint demo is on Friday at 4pm.",
                             "Sprint demo rescheduled to Thursday at 2pm."], [("b", "a")]),
    "en-ticket-verb-first": (["BILL-12 is assigned to Nora.", "Reassigned BILL-12 to Omar."], [("b", "a")]),
    "en-price-now-costs": (["The Basic plan costs €9 a month.", "The Basic plan now costs €11 a month."],
                           [("b", "a")]),
    "en-engaged": (["Vera is single.", "Vera is engaged to Paulo."], [("b", "a")]),
    "en-diet-vegan": (["Wes eats meat.", "Wes is vegan now."], [("b", "a")]),
    "en-role": (["Xena's role is QA lead.", "Xena's role is now engineering manager."], [("b", "a")]),
    "en-two-loves": (["Yara loves sushi.", "Yara loves tacos."], []),
    "en-two-past-trips": (["Zane went to Berlin in 2021.", "Zane went to Prague in 2023."], []),
    "en-brother-elsewhere": (["Abel lives in Denver.", "Abel's brother lives in Boulder."], []),
    "en-where-question": (["Bea lives in Porto.", "Where does Bea live now?"], []),
    "en-may-join": (["Cruz works at IBM.", "Cruz may join Oracle next spring."], []),
    "en-two-timeouts": (["The API timeout is 10 seconds.", "The DB timeout is 5 seconds."], []),
    "en-detail-added": (["Dana's desk is on floor 2.", "Dana's desk is on floor 2, near the window."], []),
    "en-plan-then-done": (["Eli will move to Lisbon in June.", "Eli moved to Lisbon."], []),
    "en-eats-more": (["Fay eats fish.", "Fay eats chicken too."], []),
    "zh-moved-to": (["钟南住在西安雁塔区。", "钟南搬家到了北京海淀区。"], [("b", "a")]),
    "zh-job-hop": (["方圆在阿里巴巴工作。", "方圆跳槽到了美团。"], [("b", "a")]),
    "zh-wechat": (["余晖的微信号是 yuhui88。", "余晖的微信号换成了 yh2024。"], [("b", "a")]),
    "zh-weekly-meeting": (["周会时间是每周二上午。", "周会时间改为每周三下午。"], [("b", "a")]),
    "zh-cache-expiry": (["缓存过期时间设置为 10 分钟。", "缓存过期时间调整为 30 分钟。"], [("b", "a")]),
    "zh-ticket-handed": (["工单 SEC-9 由吕工负责。", "SEC-9 已交给施工处理。"], [("b", "a")]),
    "zh-price-adjusted": (["高级会员价格是 58 元一个月。", "高级会员价格调整为 68 元一个月。"], [("b", "a")]),
    "zh-favourite-colour": (["甘露最喜欢的颜色是蓝色。", "甘露现在最喜欢的颜色是绿色。"], [("b", "a")]),
    "zh-two-sports": (["田野喜欢打篮球。", "田野也喜欢踢足球。"], []),
    "zh-two-countries": (["贺兰去过日本。", "贺兰去过韩国。"], []),
    "zh-parents-elsewhere": (["邵华住在厦门。", "邵华的父母住在泉州。"], []),
    "zh-is-it-question": (["常青住在天津。", "常青是不是搬去北京了？"], []),
    "zh-considering": (["卫东在京东上班。", "卫东考虑明年去华为。"], []),
    "zh-two-timeouts": (["接口超时时间是 5 秒。", "数据库超时时间是 3 秒。"], []),
    "zh-phone-paraphrase": (["凌云的手机号是 137 0000 1111。", "凌云手机号 13700001111，晚上别打。"], []),
    # A third batch aimed at the rules' edges (12 of 22 passed as written).
    "en-in-the-country": (["Gina lives in the UK.", "Gina moved to Canada last spring."], [("b", "a")]),
    "en-moved-from-to": (["Hal lives in Boston.", "Hal moved from Boston to Austin."], [("b", "a")]),
    "en-numbered-days": (["Day 1 of the summit is on May 3.", "Day 2 of the summit is on May 4."], []),
    "en-car-described": (["Tom's car is red.", "Tom's car is in the garage."], []),
    "en-dog-described": (["Sara's dog is friendly.", "Sara's dog is old."], []),
    "en-reports-to": (["Ivy's manager is Carl Stone.", "Ivy reports to Dina Ruiz now; Carl left."],
                      [("b", "a")]),
    "en-car-model": (["Jon's car is a Honda.", "Jon's car is now a Tesla."], [("b", "a")]),
    "en-freeze-moved": (["The deploy freeze starts on Dec 18.", "Deploy freeze moved to Dec 20."],
                        [("b", "a")]),
    "en-sister-age": (["Kai is 34 years old.", "Kai's sister is 29 years old."], []),
    "en-two-addresses": (["Lou's home address is 9 Oak Road.", "Lou's office address is 1 Main Street."],
                         []),
    "en-rollback": (["Production runs billing v3.2.", "We rolled billing back to v3.1 in production."],
                    [("b", "a")]),
    "en-status": (["Mo's status is active.", "Mo's status is on leave until March."], [("b", "a")]),
    "en-two-sports": (["Ned plays tennis every Sunday.", "Ned plays golf every Sunday now."], []),
    "en-unrelated-cats": (["Ola's password hint is her cat's name.", "Ola likes cats."], []),
    "zh-boss": (["俞飞的老板是周总。", "俞飞的直属领导换成了吴总。"], [("b", "a")]),
    "zh-lives-near-work": (["蔡文住在公司附近。", "蔡文现在住在郊区。"], [("b", "a")]),
    "zh-numbered-days": (["第一天的会议在 3 号厅。", "第二天的会议在 5 号厅。"], []),
    "zh-car-described": (["任然的车是白色的。", "任然的车在修理厂。"], []),
    "zh-role-at": (["沈星目前在滴滴担任数据分析师。", "沈星现在在快手当数据分析师。"], [("b", "a")]),
    "zh-two-environments": (["测试环境数据库密码每月更换一次。", "生产环境数据库密码每周更换一次。"], []),
    "zh-birthday-detail": (["庞博的生日是 5 月 2 日。", "庞博的生日是 5 月 2 日，别忘了买蛋糕。"], []),
    "zh-colleague-email": (["江河的邮箱是 jh@a.com。", "江河的同事的邮箱是 lx@a.com。"], []),
    # Dialogue turns stored as "<speaker>: <utterance>": "I" is the speaker.
    "en-dialogue-moved": (["Caroline: I live in Boston, near the harbour.",
                           "Caroline: Big news, I moved to Denver last month!"], [("b", "a")]),
    "en-dialogue-two-speakers": (["Caroline: I live in Boston.", "Mel: I live in Rome."], []),
    "en-dialogue-new-job": (["John: I work at Google as an engineer.",
                             "John: I work at Stripe now, same role."], [("b", "a")]),
}


def _run(texts):
    keys = [chr(ord("a") + i) for i in range(len(texts))]
    return set(pairs_for(list(zip(keys, texts, strict=True))))


@pytest.mark.parametrize("name", sorted(HELD_OUT))
def test_held_out_case(name):
    texts, expected = HELD_OUT[name]
    assert _run(texts) == set(expected)


def test_held_out_cases_cover_both_languages_and_both_kinds():
    assert len(HELD_OUT) >= 25
    for lang in ("en", "zh"):
        mine = [v for k, v in HELD_OUT.items() if k.startswith(lang)]
        assert any(expected for _, expected in mine) and any(not expected for _, expected in mine)


def test_claim_shape():
    [claim] = [c for c in claims("Maya moved to Berlin last month.") if not c.slot.startswith("frame:")]
    assert isinstance(claim, Claim)
    assert claim.slot == "maya|residence" and claim.value == "berlin"
    assert claim.change and "moved" in claim.words and "berlin" in claim.words
    assert slot_keys("Maya moved to Berlin last month.") == ["maya|residence"]


@pytest.mark.parametrize("text", [
    "Does Chloe still live in Dublin?", "Ahmed might move to Leeds next year.",
    "宋佳说明年可能会搬去长沙。", "梁晨现在还住在南京吗？", "", "   "])
def test_questions_hedges_and_blanks_state_nothing(text):
    assert claims(text) == []


def test_proposal_shape_and_evidence_is_json():
    [proposal] = propose("Liam relocated again and now lives in Seattle.",
                         [("m2", "Liam moved to Denver in the summer."),
                          ("m1", "Liam lives in Austin and works remotely.")])
    assert isinstance(proposal, Proposal)
    assert proposal.older == "m2" and proposal.slot == "liam|residence"
    assert 0 < proposal.confidence <= 1
    assert "denver" in proposal.reason and "seattle" in proposal.reason
    assert json.loads(json.dumps(proposal.evidence)) == proposal.evidence
    assert set(proposal.evidence) == {"slot", "older_value", "newer_value", "words"}


def test_change_words_raise_confidence():
    held = [("old", "The payment API client timeout is set to 30s.")]
    implicit = propose("The payment API client timeout is 60s.", held)
    explicit = propose("Raised the payment API client timeout to 60s.", held)
    assert implicit and explicit and explicit[0].confidence > implicit[0].confidence


def test_same_value_is_a_paraphrase_not_a_supersession():
    assert propose("钱多多在腾讯做产品经理。", [("a", "钱多多在腾讯做产品经理。")]) == []


def test_at_most_one_proposal_per_older_memory():
    proposals = propose("Bob works at Globex as a team lead.",
                        [("a", "Bob works at Acme Corp as a data analyst.")])
    assert [p.older for p in proposals] == ["a"]


def test_slots_are_bounded():
    text = "The " + "very " * 80 + "long setting is 5 seconds."
    assert all(len(key) <= 200 for key in slot_keys(text))


def test_claims_are_fast():
    texts = ["Customer Hiroshi Tanaka's callback number is +44 7700 900123; call after 5pm.",
             "订单服务的库存接口超时时间从 30 秒改为 60 秒，因为高峰期下游响应变慢了，运维已确认。"] * 50
    start = time.perf_counter()
    for text in texts:
        claims(text)
    per_call_ms = (time.perf_counter() - start) * 1000 / len(texts)
    assert per_call_ms < 1.0  # generous for a loaded CI box; the bench measures the real figure
