"""Settings of the read side's HTTP API: `CROUPIER_API_<NAME>` environment variables."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ApiSettings(BaseSettings):
    """Where `croupier api` listens and how often the board page polls."""

    model_config = SettingsConfigDict(env_prefix="CROUPIER_API_", frozen=True, extra="ignore")

    host: str = Field(default="127.0.0.1", description="address the HTTP API binds")
    port: int = Field(default=8080, ge=0, le=65535, description="its port; 0 picks a free one")
    poll_ms: int = Field(default=1000, ge=100, le=60000, description="board page refresh period")
