"""The four tool schemas of ../shared/perf written for the peers: pydantic
models (strict, closed) and msgspec structs (closed), each constraint of the
JSON Schema spelled in the library's own terms."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Literal, Optional, Tuple

import msgspec
from msgspec import Meta
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import Annotated

# ---- pydantic (strict mode, extra members forbidden) ----


class Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class PSearch(Strict):
    query: Annotated[str, Field(min_length=1, max_length=500)]
    limit: Optional[Annotated[int, Field(ge=1, le=10)]] = None


class PRefund(Strict):
    action: Literal["refund"]
    order_id: Annotated[str, Field(pattern=r"^[A-Z]-\d{4}$")]
    amount: Annotated[int, Field(ge=1, le=5000)]
    notify_customer: bool
    memo: Optional[Annotated[str, Field(max_length=200)]] = None


class PReporter(Strict):
    id: Annotated[str, Field(pattern=r"^U\d{6}$")]
    name: Annotated[str, Field(min_length=1, max_length=100)]
    email: Annotated[str, Field(max_length=254)]


class PAssignee(Strict):
    id: Annotated[str, Field(pattern=r"^U\d{6}$")]
    role: Literal["owner", "reviewer", "watcher"]


class PContact(Strict):
    phone: Annotated[str, Field(max_length=32)]
    timezone: Optional[Annotated[str, Field(max_length=64)]] = None


class PCustomer(Strict):
    account_id: Annotated[str, Field(pattern=r"^ACC-[0-9]{8}$")]
    tier: Literal["free", "pro", "enterprise"]
    contact: Optional[PContact] = None


class PLineItem(Strict):
    sku: Annotated[str, Field(pattern=r"^SKU-[0-9]{6}$")]
    qty: Annotated[int, Field(ge=1, le=1000)]
    unit_price: Annotated[float, Field(ge=0, le=100000, allow_inf_nan=False)]
    note: Optional[Annotated[str, Field(max_length=200)]] = None


class PAttachment(Strict):
    name: Annotated[str, Field(max_length=255)]
    size_bytes: Annotated[int, Field(ge=0, le=100000000)]
    mime: Annotated[str, Field(max_length=100)]


class PCreateTicket(Strict):
    title: Annotated[str, Field(min_length=1, max_length=200)]
    description: Annotated[str, Field(max_length=4000)]
    priority: Literal["low", "medium", "high", "urgent"]
    reporter: PReporter
    assignees: Optional[Annotated[List[PAssignee], Field(max_length=10)]] = None
    labels: Optional[Annotated[List[Annotated[str, Field(min_length=1, max_length=32)]], Field(max_length=20)]] = None
    estimate_hours: Optional[Annotated[float, Field(ge=0, le=1000, allow_inf_nan=False)]] = None
    due_date: Optional[Annotated[str, Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]] = None
    customer: PCustomer
    line_items: Annotated[List[PLineItem], Field(min_length=1, max_length=50)]
    attachments: Optional[Annotated[List[PAttachment], Field(max_length=10)]] = None
    metadata: Optional[Annotated[Dict[str, Annotated[str, Field(max_length=100)]], Field(max_length=20)]] = None
    watch: Optional[bool] = None


class PRecord(Strict):
    id: Annotated[int, Field(ge=1, le=9007199254740991)]
    sku: Annotated[str, Field(pattern=r"^SKU-[0-9]{6}$")]
    name: Annotated[str, Field(min_length=1, max_length=100)]
    price: Annotated[float, Field(ge=0, le=1000000, allow_inf_nan=False)]
    qty: Annotated[int, Field(ge=0, le=100000)]
    active: bool
    tags: Optional[Annotated[List[Annotated[str, Field(max_length=16)]], Field(max_length=5)]] = None


class PBulkUpsert(Strict):
    table: Annotated[str, Field(pattern=r"^[a-z_][a-z0-9_]{0,62}$")]
    mode: Literal["insert", "upsert"]
    dry_run: Optional[bool] = None
    records: Annotated[List[PRecord], Field(min_length=1, max_length=10000)]


PYDANTIC = {"search": PSearch, "refund": PRefund, "create_ticket": PCreateTicket, "bulk_upsert": PBulkUpsert}

# ---- msgspec (closed structs; msgspec's JSON decoder is strict about types) ----


class Closed(msgspec.Struct, forbid_unknown_fields=True):
    pass


Unset = msgspec.UNSET
UnsetType = msgspec.UnsetType


class MSearch(Closed):
    query: Annotated[str, Meta(min_length=1, max_length=500)]
    limit: Annotated[int, Meta(ge=1, le=10)] | UnsetType = Unset


class MRefund(Closed):
    action: Literal["refund"]
    order_id: Annotated[str, Meta(pattern=r"^[A-Z]-\d{4}$")]
    amount: Annotated[int, Meta(ge=1, le=5000)]
    notify_customer: bool
    memo: Annotated[str, Meta(max_length=200)] | UnsetType = Unset


class MReporter(Closed):
    id: Annotated[str, Meta(pattern=r"^U\d{6}$")]
    name: Annotated[str, Meta(min_length=1, max_length=100)]
    email: Annotated[str, Meta(max_length=254)]


class MAssignee(Closed):
    id: Annotated[str, Meta(pattern=r"^U\d{6}$")]
    role: Literal["owner", "reviewer", "watcher"]


class MContact(Closed):
    phone: Annotated[str, Meta(max_length=32)]
    timezone: Annotated[str, Meta(max_length=64)] | UnsetType = Unset


class MCustomer(Closed):
    account_id: Annotated[str, Meta(pattern=r"^ACC-[0-9]{8}$")]
    tier: Literal["free", "pro", "enterprise"]
    contact: MContact | UnsetType = Unset


class MLineItem(Closed):
    sku: Annotated[str, Meta(pattern=r"^SKU-[0-9]{6}$")]
    qty: Annotated[int, Meta(ge=1, le=1000)]
    unit_price: Annotated[float, Meta(ge=0, le=100000)]
    note: Annotated[str, Meta(max_length=200)] | UnsetType = Unset


class MAttachment(Closed):
    name: Annotated[str, Meta(max_length=255)]
    size_bytes: Annotated[int, Meta(ge=0, le=100000000)]
    mime: Annotated[str, Meta(max_length=100)]


class MCreateTicket(Closed):
    title: Annotated[str, Meta(min_length=1, max_length=200)]
    description: Annotated[str, Meta(max_length=4000)]
    priority: Literal["low", "medium", "high", "urgent"]
    reporter: MReporter
    customer: MCustomer
    line_items: Annotated[List[MLineItem], Meta(min_length=1, max_length=50)]
    assignees: Annotated[List[MAssignee], Meta(max_length=10)] | UnsetType = Unset
    labels: Annotated[List[Annotated[str, Meta(min_length=1, max_length=32)]], Meta(max_length=20)] | UnsetType = Unset
    estimate_hours: Annotated[float, Meta(ge=0, le=1000)] | UnsetType = Unset
    due_date: Annotated[str, Meta(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")] | UnsetType = Unset
    attachments: Annotated[List[MAttachment], Meta(max_length=10)] | UnsetType = Unset
    metadata: Annotated[Dict[str, Annotated[str, Meta(max_length=100)]], Meta(max_length=20)] | UnsetType = Unset
    watch: bool | UnsetType = Unset


class MRecord(Closed):
    id: Annotated[int, Meta(ge=1, le=9007199254740991)]
    sku: Annotated[str, Meta(pattern=r"^SKU-[0-9]{6}$")]
    name: Annotated[str, Meta(min_length=1, max_length=100)]
    price: Annotated[float, Meta(ge=0, le=1000000)]
    qty: Annotated[int, Meta(ge=0, le=100000)]
    active: bool
    tags: Annotated[List[Annotated[str, Meta(max_length=16)]], Meta(max_length=5)] | UnsetType = Unset


class MBulkUpsert(Closed):
    table: Annotated[str, Meta(pattern=r"^[a-z_][a-z0-9_]{0,62}$")]
    mode: Literal["insert", "upsert"]
    records: Annotated[List[MRecord], Meta(min_length=1, max_length=10000)]
    dry_run: bool | UnsetType = Unset


MSGSPEC = {"search": MSearch, "refund": MRefund, "create_ticket": MCreateTicket, "bulk_upsert": MBulkUpsert}
