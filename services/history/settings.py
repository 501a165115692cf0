"""Settings of the read side: `CROUPIER_API_<NAME>` environment variables, and `DATABASE_URL`."""

from __future__ import annotations

from pydantic import AliasChoices, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DATABASES = ("postgresql://", "postgres://", "postgresql+psycopg://", "sqlite://")
"""How a database URL the read side can use starts."""


class ApiSettings(BaseSettings):
    """Where `croupier api` listens, the database it serves, and how often the board polls."""

    model_config = SettingsConfigDict(env_prefix="CROUPIER_API_", frozen=True, extra="ignore")

    host: str = Field(default="127.0.0.1", description="address the HTTP API binds")
    port: int = Field(default=8080, ge=0, le=65535, description="its port; 0 picks a free one")
    poll_ms: int = Field(default=1000, ge=100, le=60000, description="board page refresh period")
    database_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("DATABASE_URL", "CROUPIER_API_DATABASE_URL"),
        description="the read side's database (postgresql://...); unset: .data/readside.sqlite",
    )
    project: bool = Field(
        default=True,
        description="also run the projector in the API process; false for more API processes "
        "over a database that one `croupier projector` fills",
    )
    projector_shards: int = Field(
        default=1,
        ge=1,
        description="how many `croupier projector` processes share the partitions (more than one "
        "when a single process cannot keep up: each is bound to one processor)",
    )
    projector_shard: int = Field(
        default=0,
        ge=0,
        description="which of them this one is, 0 to projector_shards - 1: it projects the "
        "partitions numbered projector_shard modulo projector_shards of every projected topic",
    )

    @property
    def shard(self) -> tuple[int, int]:
        """This projector's shard and the count of shards, as `Projector` takes them."""
        return (self.projector_shard, self.projector_shards)

    @field_validator("database_url")
    @classmethod
    def _known_database(cls, url: str | None) -> str | None:
        if url and not url.startswith(DATABASES):
            raise ValueError(
                "not a database croupier can use: give postgresql://user@host:port/db "
                "(psycopg 3) or sqlite:///path"
            )
        return url

    @model_validator(mode="after")
    def _one_of_the_shards(self) -> ApiSettings:
        if self.projector_shard >= self.projector_shards:
            raise ValueError(
                f"projector_shard {self.projector_shard} is not one of the "
                f"{self.projector_shards} shards (0 to {self.projector_shards - 1}): set "
                "CROUPIER_API_PROJECTOR_SHARD below CROUPIER_API_PROJECTOR_SHARDS"
            )
        return self
