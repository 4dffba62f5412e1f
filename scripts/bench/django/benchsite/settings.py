"""Settings of the Django stack the issue compares against: django-tenants (schema per
school, `search_path` per request), DRF with simplejwt bearer tokens, served by gunicorn."""
import os
from datetime import timedelta
from urllib.parse import urlparse

url = urlparse(os.environ["DJANGO_DATABASE_URL"])
SECRET_KEY = os.environ.get("DJANGO_SECRET", "bench-secret-bench-secret-bench-secret-0123")
DEBUG = False
ALLOWED_HOSTS = ["*"]
USE_TZ = True
TIME_ZONE = "UTC"
ROOT_URLCONF = "benchsite.urls"
WSGI_APPLICATION = "benchsite.wsgi.application"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

DATABASES = {
    "default": {
        "ENGINE": "django_tenants.postgresql_backend",
        "NAME": url.path.lstrip("/"),
        "USER": url.username or "postgres",
        "PASSWORD": url.password or "",
        "HOST": url.hostname or "127.0.0.1",
        "PORT": url.port or 5432,
        # Persistent connections, as a tuned deployment runs them.
        "CONN_MAX_AGE": 600,
    }
}
DATABASE_ROUTERS = ("django_tenants.routers.TenantSyncRouter",)

SHARED_APPS = [
    "django_tenants",
    "customers",
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "rest_framework",
]
TENANT_APPS = ["school"]
INSTALLED_APPS = SHARED_APPS + [app for app in TENANT_APPS if app not in SHARED_APPS]
TENANT_MODEL = "customers.Client"
TENANT_DOMAIN_MODEL = "customers.Domain"

MIDDLEWARE = [
    "django_tenants.middleware.main.TenantMainMiddleware",
    "django.middleware.common.CommonMiddleware",
]

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework_simplejwt.authentication.JWTAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
}
SIMPLE_JWT = {"ACCESS_TOKEN_LIFETIME": timedelta(hours=1), "SIGNING_KEY": SECRET_KEY}
