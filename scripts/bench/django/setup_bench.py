"""Creates the schema, one school `bench1` on `bench1.localhost`, a user, and prints an
access token for it (simplejwt)."""
import os
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchsite.settings")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from rest_framework_simplejwt.tokens import AccessToken  # noqa: E402

from customers.models import Client, Domain  # noqa: E402

call_command("makemigrations", "customers", "school", verbosity=0)
call_command("migrate_schemas", "--shared", verbosity=0)
Client(schema_name="public", name="platform").save()
school = Client(schema_name="bench1", name="Bench 1")
school.save()
Domain(domain="bench1.localhost", tenant=school, is_primary=True).save()
user = get_user_model().objects.create_user("teacher", "teacher@bench1.test", "bench-password")
print(str(AccessToken.for_user(user)))
