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
    poll_ms: int = Field(
        default=1000, ge=100, le=60000, description="how often the board page asks for new results"
    )
    database_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("DATABASE_URL", "CROUPIER_API_DATABASE_URL"),
        description="the read side's database: postgresql://user@host:port/db (psycopg 3) or "
        "sqlite:///path; unset: sqlite:///.data/readside.sqlite",
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


class AuthSettings(BaseSettings):
    """Who may call `croupier api`'s protected routes: bearer tokens (JWT, EdDSA or RS256)
    verified against a JSON Web Key Set, or nobody checks (a gateway in front does)."""

    model_config = SettingsConfigDict(env_prefix="CROUPIER_API_", frozen=True, extra="ignore")

    auth: bool = Field(
        default=True,
        description="check bearer tokens on the history, recall and report routes; off (false) "
        "only behind a gateway that checks them",
    )
    jwks_file: str | None = Field(
        default=None,
        description="a JSON Web Key Set file of the token issuer's public keys, read again when "
        "it changes; this or the URL is needed while auth is on",
    )
    jwks_url: str | None = Field(
        default=None, description="or the issuer's JWKS URL (https://...), fetched and cached"
    )
    jwks_refresh_s: int = Field(
        default=300,
        ge=1,
        le=86400,
        description="seconds a fetched JWKS is kept before it is fetched again (a key removed "
        "from it is refused at most this long after)",
    )
    audience: str = Field(default="croupier", min_length=1, description="the `aud` required")
    issuer: str | None = Field(default=None, description="the `iss` required; unset: any")
    leeway_s: int = Field(
        default=30, ge=0, le=300, description="clock leeway of `exp`, `nbf` and `iat`, seconds"
    )

    @field_validator("jwks_url")
    @classmethod
    def _web_url(cls, url: str | None) -> str | None:
        if url and not url.startswith(("https://", "http://")):
            raise ValueError("not a JWKS URL: give https://host/path/jwks.json")
        return url

    @model_validator(mode="after")
    def _keys_when_on(self) -> AuthSettings:
        if self.auth and not (self.jwks_file or self.jwks_url):
            raise ValueError(
                "the API checks bearer tokens (CROUPIER_API_AUTH is on) and has no keys: set "
                "CROUPIER_API_JWKS_FILE or CROUPIER_API_JWKS_URL to the issuer's JWKS, or "
                "CROUPIER_API_AUTH=off behind a gateway that checks the tokens"
            )
        if self.jwks_file and self.jwks_url:
            raise ValueError(
                "CROUPIER_API_JWKS_FILE and CROUPIER_API_JWKS_URL are both set: set one"
            )
        return self
