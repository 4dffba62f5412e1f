from django.db import models
from django_tenants.models import DomainMixin, TenantMixin


class Client(TenantMixin):
    name = models.CharField(max_length=255)
    auto_create_schema = True


class Domain(DomainMixin):
    pass
