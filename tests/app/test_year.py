"""The school year in the app: an office user imports a file with one bad row (sees it,
fixes it, imports), then rolls the year over. Runs after test_app.py: the rollover
changes the demo school's active session."""

from playwright.sync_api import expect

from conftest import SCHOOL, http, school_token, signed_in

GOOD = "admission_number;first_name;last_name;academic_class\r\nIMP-1;Zoë;Ağaoğlu;Form 1 Blue\r\nIMP-2;René;Dupré;Form 2 Green\r\n"
BAD = GOOD.replace("IMP-2;René;Dupré;Form 2 Green", "IMP-2;René;;Form 9")


def go(page, section):
    page.locator("#nav").get_by_role("link", name=section, exact=True).click()


TEACHERS = "first_name,last_name,email,staff_number\r\nNia,Okafor,nia.okafor@greenwood.test,GW-101\r\nTom,Berg,tom.berg@greenwood.test,GW-102\r\n"


def test_an_office_user_imports_teachers_fixing_a_bad_row(page, tmp_path):
    page.watch.expected.append("status of 400")
    signed_in(page, "office@greenwood.test")
    go(page, "Import")
    kinds = page.get_by_label("What the file holds")
    # The office may import every kind but marks (it holds no add_mark).
    offered = kinds.locator("option").evaluate_all("os => os.map(o => o.value)")
    assert offered == ["classes", "subjects", "students", "teachers", "teacher-assignments", "enrollments"]
    kinds.select_option("teachers")
    template = page.get_by_role("link", name="Download the template")
    expect(template).to_have_attribute("download", "teachers-template.csv")
    expect(template).to_have_attribute("href", "data:text/csv;charset=utf-8,first_name%2Clast_name%2Cemail%2Cphone%2Cstaff_number%0D%0A")
    expect(page.locator("select[name=exam]")).to_be_hidden()

    bad = tmp_path / "teachers.csv"
    bad.write_text(TEACHERS.replace("tom.berg@greenwood.test", "tom.berg(at)greenwood"), encoding="utf-8")
    page.get_by_label("File (CSV or XLSX)").set_input_files(str(bad))
    page.get_by_role("button", name="Check the file").click()
    expect(page.get_by_role("status").filter(has_text="bad row")).to_be_visible()
    marked = page.locator("td.bad-cell")
    expect(marked).to_have_count(1)
    expect(marked).to_contain_text("not a valid e-mail address")
    expect(page.locator("tr", has=marked).locator("td").first).to_have_text("3")
    expect(page.get_by_role("button", name="Import")).to_be_disabled()

    good = tmp_path / "teachers-fixed.csv"
    good.write_text(TEACHERS, encoding="utf-8")
    page.get_by_label("File (CSV or XLSX)").set_input_files(str(good))
    page.get_by_role("button", name="Check the file").click()
    expect(page.get_by_role("status")).to_contain_text("2 rows: 2 new")
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_role("status")).to_contain_text("Imported. 2 rows: 2 new")
    token = school_token("office@greenwood.test")
    found = http("GET", "/api/v1/school/teachers/?search=GW-10", token=token)[2]
    assert sorted(t["name"] for t in found["results"]) == ["Nia Okafor", "Tom Berg"]
    nia = http("GET", "/api/v1/school/users/?search=nia.okafor", token=token)[2]["results"][0]
    assert nia["roles"] == ["teacher"] and nia["teacher"]


def test_a_teacher_imports_one_exams_marks(page, tmp_path):
    token = school_token("teacher@greenwood.test")
    api = "/api/v1/school"
    session = next(s for s in http("GET", f"{api}/sessions/", token=token)[2]["results"] if s["is_active"])
    exam_session = http("GET", f"{api}/sessions/{session['id']}/exam-sessions/", token=token)[2]["results"][0]
    exams = f"{api}/sessions/{session['id']}/exam-sessions/{exam_session['id']}/exams/"
    exam = http("GET", exams, token=token)[2]["results"][0]
    pupils = http("GET", f"{api}/classes/{exam['academic_class']}/students/", token=token)[2]["results"][:2]
    numbers = [p["admission_number"] for p in pupils]

    signed_in(page, "teacher@greenwood.test")
    go(page, "Import")
    kinds = page.get_by_label("What the file holds")
    # A teacher may import marks only.
    offered = kinds.locator("option").evaluate_all("os => os.map(o => o.value)")
    assert offered == ["marks"]
    expect(page.get_by_role("link", name="Download the template")).to_have_attribute(
        "href", "data:text/csv;charset=utf-8,studentadmissionnumber%2Cmark%2Csymbol%2Ccomment%2Csubject%0D%0A")
    choice = page.locator("select[name=exam]")
    expect(choice.locator(f'option[value="{exam["id"]}"]')).to_have_count(1)
    choice.select_option(exam["id"])
    marks = tmp_path / "marks.csv"
    marks.write_text(f"studentadmissionnumber;mark\r\n{numbers[0]};77\r\n{numbers[1]};66\r\n", encoding="utf-8")
    page.get_by_label("File (CSV or XLSX)").set_input_files(str(marks))
    page.get_by_role("button", name="Check the file").click()
    expect(page.get_by_role("status")).to_contain_text("The file is good. 2 rows")
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_role("status")).to_contain_text("Imported. 2 rows")
    written = http("GET", f"{exams}{exam['id']}/marks/?page_size=200", token=token)[2]["results"]
    got = {m["studentadmissionnumber"]: m["mark"] for m in written}
    assert (got[numbers[0]], got[numbers[1]]) == (77, 66)


def test_an_office_user_imports_students_then_starts_a_new_year(page, tmp_path):
    # The bad file's check and the ambiguous plan answer 400 on purpose.
    page.watch.expected.append("status of 400")
    signed_in(page, "office@greenwood.test")
    go(page, "Import")
    expect(page.get_by_role("heading", name="Import")).to_be_visible()
    page.get_by_label("What the file holds").select_option("students")
    template = page.get_by_role("link", name="Download the template")
    expect(template).to_have_attribute("download", "students-template.csv")

    bad = tmp_path / "students.csv"
    bad.write_text("\ufeff" + BAD, encoding="utf-8")
    page.get_by_label("File (CSV or XLSX)").set_input_files(str(bad))
    page.get_by_role("button", name="Check the file").click()
    expect(page.get_by_role("status").filter(has_text="bad row")).to_be_visible()
    marked = page.locator("td.bad-cell")
    expect(marked).to_have_count(2)  # last_name empty, class unknown, both on row 3
    expect(page.locator("tr", has=marked.first).locator("td").first).to_have_text("3")
    expect(page.get_by_role("button", name="Import")).to_be_disabled()

    good = tmp_path / "students-fixed.csv"
    good.write_text(GOOD, encoding="utf-8")
    page.get_by_label("File (CSV or XLSX)").set_input_files(str(good))
    page.get_by_role("button", name="Check the file").click()
    expect(page.get_by_role("status")).to_contain_text("2 rows: 2 new")
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_role("status")).to_contain_text("Imported. 2 rows: 2 new")
    token = school_token("office@greenwood.test")
    found = http("GET", "/api/v1/school/students/?search=IMP-", token=token)[2]
    assert found["count"] == 2

    go(page, "New school year")
    expect(page.get_by_role("heading", name="New school year")).to_be_visible()
    page.get_by_label("Name of the new session").fill("2027/28")
    page.get_by_label("Starts").fill("2027-09-01")
    page.get_by_label("Ends").fill("2028-07-31")
    # Two classes at the next level: the plan names the ambiguous ones.
    page.get_by_role("button", name="Preview").click()
    expect(page.get_by_role("status")).to_contain_text("Form 1 Blue")
    page.locator('fieldset:has(legend:has-text("Form 1 Blue")) select[name^="to-"]').select_option(label="Form 2 Blue")
    page.locator('fieldset:has(legend:has-text("Form 1 Green")) select[name^="to-"]').select_option(label="Form 2 Green")
    blue = page.locator('fieldset:has(legend:has-text("Form 1 Blue"))')
    blue.locator("summary").click()
    blue.get_by_label("Zoë Ağaoğlu (IMP-1)").select_option("retain")
    page.get_by_role("button", name="Preview").click()
    expect(page.get_by_role("status")).to_contain_text("1 retained")
    plan = page.get_by_role("status").inner_text()
    page.get_by_role("button", name="Start the new year").click()
    expect(page.get_by_role("status")).to_contain_text("2027/28 has begun")
    assert plan.split(": ", 1)[1] in page.get_by_role("status").inner_text()
    sessions = http("GET", "/api/v1/school/sessions/?page_size=200", token=token)[2]["results"]
    assert [s["name"] for s in sessions if s["is_active"]] == ["2027/28"]
