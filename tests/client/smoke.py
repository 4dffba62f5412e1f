"""`make client-check`: the generated Python client against a real server, as another
team's client would use it. Run by scripts/client-check.sh with the generated package on
sys.path and CLIENT_CHECK_URL, CLIENT_CHECK_SCHOOL, CLIENT_CHECK_USER, CLIENT_CHECK_PASSWORD."""

import os
import sys
import uuid

from school_management_service_client import AuthenticatedClient, Client
from school_management_service_client.api.classes import create_class
from school_management_service_client.api.exam_sessions import create_exam_session
from school_management_service_client.api.exams import create_exam
from school_management_service_client.api.marks import confirm_student_marks, list_marks
from school_management_service_client.api.school_auth import school_login
from school_management_service_client.api.sessions import create_session, get_session, list_sessions
from school_management_service_client.api.students import create_student
from school_management_service_client.api.subjects import create_subject, list_subjects
from school_management_service_client.models import (
    ConfirmStudentMarksRequest,
    CreateClassRequest,
    CreateExamRequest,
    CreateExamSessionRequest,
    CreateSessionRequest,
    CreateStudentRequest,
    CreateSubjectRequest,
    Problem,
    SchoolLoginRequest,
    SchoolLoginResponse,
)

BASE = os.environ["CLIENT_CHECK_URL"]
SCHOOL = os.environ["CLIENT_CHECK_SCHOOL"]
HEADERS = {"X-Tenant": SCHOOL}


def expect(value, kind):
    assert isinstance(value, kind), f"expected {kind.__name__}, got {value!r}"
    return value


def main() -> None:
    anonymous = Client(base_url=BASE, headers=HEADERS, raise_on_unexpected_status=True)
    login = expect(
        school_login.sync(
            client=anonymous,
            body=SchoolLoginRequest(
                identifier=os.environ["CLIENT_CHECK_USER"], password=os.environ["CLIENT_CHECK_PASSWORD"]
            ),
        ),
        SchoolLoginResponse,
    )
    client = AuthenticatedClient(
        base_url=BASE, token=login.access, headers=HEADERS, raise_on_unexpected_status=True
    )

    session = create_session.sync(
        client=client,
        body=CreateSessionRequest(name="2026/27", start_date="2026-09-01", end_date="2027-07-15"),
    )
    session_id = session.data.id
    page = list_sessions.sync(client=client)
    assert page.count >= 1 and any(s.id == session_id for s in page.results), page

    subject = create_subject.sync(client=client, body=CreateSubjectRequest(name="Mathematics", code="MAT"))
    assert any(s.id == subject.id for s in list_subjects.sync(client=client, search="math").results)
    klass = create_class.sync(client=client, body=CreateClassRequest(name="Form 1"))
    create_student.sync(
        client=client,
        body=CreateStudentRequest(admission_number="A-1", first_name="Ada", last_name="Lovelace"),
    )
    exam_session = create_exam_session.sync(
        session_id, client=client, body=CreateExamSessionRequest(name="Term 1", term="T1")
    )
    exam = create_exam.sync(
        session_id,
        exam_session.id,
        client=client,
        body=CreateExamRequest(name="Paper 1", subject=subject.id, academic_class=klass.id),
    )
    mark = confirm_student_marks.sync(
        session_id,
        exam_session.id,
        exam.id,
        client=client,
        body=ConfirmStudentMarksRequest(studentadmissionnumber="A-1", mark=72),
    )
    assert mark.mark == 72, mark
    marks = list_marks.sync(session_id, exam_session.id, exam.id, client=client)
    assert [m.studentadmissionnumber for m in marks.results] == ["A-1"], marks

    invalid = expect(create_subject.sync(client=client, body=CreateSubjectRequest(name="", code="X")), Problem)
    assert invalid.status == 400 and invalid.code == "validation_error", invalid
    assert "name" in invalid.errors.additional_properties, invalid.errors

    missing = expect(get_session.sync(uuid.uuid4(), client=client), Problem)
    assert missing.status == 404 and missing.code == "not_found", missing

    print("client-check: the generated Python client logged in, created and listed a session, "
          "a subject and a mark, and read a validation error and a 404 as Problem")


if __name__ == "__main__":
    sys.exit(main())
