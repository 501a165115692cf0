"""The secured local broker's material: its CA and certificate, its principals' passwords, the
security part of its configuration, and each principal's client settings (`clients/<name>.env`).

Used by deploy/kafka/secure.sh (and so by `KAFKA_SECURITY=scram bash deploy/kafka/up.sh`); any
script that starts brokers of this repository can call it the same way. Everything lives under the
broker's base directory (`.data/kafka` by default), private to the user (0700 directories, 0600
files); what exists already is kept, so a restart keeps its certificates and passwords. Delete a
password file and run `croupier acls --passwords DIR` to rotate that principal's password.

    python -m services.security.local prepare --base .data/kafka --bootstrap 127.0.0.1:9092
    python -m services.security.local properties --base .data/kafka --port 9092 \
        --controller-port 9093
    python -m services.security.local format-args --base .data/kafka
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import os
import secrets
import sys
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from services.roles import Role

ADMIN = "admin"
"""The operator: creates topics, users and ACLs (a super user)."""
BROKER = "broker"
"""The brokers' own SASL login between each other (a super user)."""
BROKER_CN = "croupier-broker"
"""The certificate's subject: the principal (User:CN=croupier-broker) of the controller link."""
PRINCIPALS = (ADMIN, BROKER, *(role.value for role in Role))
MECHANISM = "SCRAM-SHA-512"
VALID_DAYS = 825


def write_private(path: Path, data: bytes) -> None:
    """Write a file only its owner can read, atomically."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(tmp, path)


def _directory(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def tls_dir(base: Path) -> Path:
    return base / "tls"


def clients_dir(base: Path) -> Path:
    return base / "clients"


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _pem_key(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _certificate(
    subject: str,
    key: rsa.RSAPrivateKey,
    issuer: tuple[x509.Name, rsa.RSAPrivateKey] | None,
    hosts: list[str],
) -> x509.Certificate:
    """A CA certificate (issuer None: self-signed) or a broker certificate for `hosts`."""
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    issuer_name, signer = issuer if issuer is not None else (name, key)
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
    )
    if issuer is None:
        builder = builder.add_extension(
            x509.BasicConstraints(ca=True, path_length=0), critical=True
        ).add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    else:
        names: list[x509.GeneralName] = []
        for host in hosts:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        builder = (
            builder.add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(
                # serverAuth for its listeners, clientAuth for its own link to the controller
                x509.ExtendedKeyUsage(
                    [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                ),
                critical=False,
            )
        )
    return builder.sign(signer, hashes.SHA256())


def certificates(base: Path, hosts: list[str]) -> None:
    """The CA (kept once made) and a broker certificate for `hosts` signed by it."""
    tls = _directory(tls_dir(base))
    ca_key_path, ca_path = tls / "ca.key", tls / "ca.pem"
    if ca_key_path.exists() and ca_path.exists():
        ca_key = serialization.load_pem_private_key(ca_key_path.read_bytes(), password=None)
        assert isinstance(ca_key, rsa.RSAPrivateKey)
        ca = x509.load_pem_x509_certificate(ca_path.read_bytes())
    else:
        ca_key = _key()
        ca = _certificate("croupier local CA", ca_key, None, [])
        write_private(ca_key_path, _pem_key(ca_key))
        write_private(ca_path, ca.public_bytes(serialization.Encoding.PEM))
        ca_path.chmod(0o644)
    keystore = tls / "broker-keystore.pem"
    if keystore.exists() and _covers(keystore, hosts, ca):
        return
    key = _key()
    cert = _certificate(BROKER_CN, key, (ca.subject, ca_key), hosts)
    chain = cert.public_bytes(serialization.Encoding.PEM) + ca.public_bytes(
        serialization.Encoding.PEM
    )
    write_private(keystore, _pem_key(key) + chain)


def _covers(keystore: Path, hosts: list[str], ca: x509.Certificate) -> bool:
    """Whether the broker certificate there is the CA's, names every host and is not near expiry."""
    cert = x509.load_pem_x509_certificates(keystore.read_bytes())[0]
    if cert.issuer != ca.subject:
        return False
    if cert.not_valid_after_utc - datetime.datetime.now(datetime.UTC) < datetime.timedelta(days=30):
        return False
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    have = {str(ip) for ip in names.get_values_for_type(x509.IPAddress)}
    have |= set(names.get_values_for_type(x509.DNSName))
    return set(hosts) <= have


def passwords(base: Path) -> dict[str, str]:
    """Every principal's password, made once (a missing file gets a new one)."""
    clients = _directory(clients_dir(base))
    found: dict[str, str] = {}
    for name in PRINCIPALS:
        path = clients / f"{name}.password"
        if not path.exists() or not path.read_text(encoding="utf-8").strip():
            write_private(path, (secrets.token_urlsafe(24) + "\n").encode())
        found[name] = path.read_text(encoding="utf-8").splitlines()[0]
    return found


def env_files(base: Path, bootstrap: str) -> None:
    """clients/<principal>.env: the settings a client of that principal runs with."""
    clients = clients_dir(base).resolve()
    ca = (tls_dir(base) / "ca.pem").resolve()
    for name in PRINCIPALS:
        if name == BROKER:
            continue
        lines = [
            f"KAFKA_BOOTSTRAP={bootstrap}",
            "CROUPIER_KAFKA_SECURITY_PROTOCOL=SASL_SSL",
            f"CROUPIER_KAFKA_SASL_MECHANISM={MECHANISM}",
            f"CROUPIER_KAFKA_USERNAME={name}",
            f"CROUPIER_KAFKA_PASSWORD_FILE={clients / f'{name}.password'}",
            f"CROUPIER_KAFKA_CA_FILE={ca}",
        ]
        write_private(clients / f"{name}.env", ("\n".join(lines) + "\n").encode())


def read_env(path: Path) -> dict[str, str]:
    """The variables of a clients/<principal>.env file."""
    found: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition("=")
            found[key.strip()] = value.strip()
    return found


def prepare(base: Path, bootstrap: str) -> None:
    """Certificates for the bootstrap's hosts, passwords and env files (kept where they exist)."""
    hosts = sorted({"127.0.0.1", "localhost", *(a.rsplit(":", 1)[0] for a in bootstrap.split(","))})
    certificates(base, hosts)
    passwords(base)
    env_files(base, bootstrap)


def properties(base: Path, port: int, controller_port: int) -> str:
    """The security part of a broker's server.properties (appended: its keys override).

    Clients: SASL_SSL with SCRAM-SHA-512 on 127.0.0.1:port. The controller link: TLS with client
    certificates (SCRAM credentials live in the metadata the controller serves, so its own
    listener cannot rely on them). The StandardAuthorizer denies whatever no ACL allows.
    """
    tls = tls_dir(base).resolve()
    broker = passwords(base)[BROKER]
    jaas = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{BROKER}" password="{broker}";'
    )
    return "\n".join(
        [
            "",
            "# --- security (deploy/kafka/secure.sh): these keys override the plaintext ones above",
            f"listeners=SASL_SSL://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
            f"advertised.listeners=SASL_SSL://127.0.0.1:{port}",
            "inter.broker.listener.name=SASL_SSL",
            "listener.security.protocol.map=CONTROLLER:SSL,SASL_SSL:SASL_SSL",
            f"sasl.enabled.mechanisms={MECHANISM}",
            f"sasl.mechanism.inter.broker.protocol={MECHANISM}",
            f"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config={jaas}",
            "ssl.keystore.type=PEM",
            f"ssl.keystore.location={tls / 'broker-keystore.pem'}",
            "ssl.truststore.type=PEM",
            f"ssl.truststore.location={tls / 'ca.pem'}",
            "ssl.endpoint.identification.algorithm=https",
            "ssl.enabled.protocols=TLSv1.3,TLSv1.2",
            "listener.name.controller.ssl.client.auth=required",
            "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            f"super.users=User:{ADMIN};User:{BROKER};User:CN={BROKER_CN}",
            "allow.everyone.if.no.acl.found=false",
            "",
        ]
    )


def format_args(base: Path) -> list[str]:
    """`kafka-storage format` arguments that create the admin's and the brokers' SCRAM users (the
    roles' users are created by `croupier acls --passwords`)."""
    found = passwords(base)
    return [
        arg
        for name in (ADMIN, BROKER)
        for arg in ("--add-scram", f"{MECHANISM}=[name={name},password={found[name]}]")
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m services.security.local")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("prepare", help="certificates, passwords and clients/*.env")
    p.add_argument("--base", type=Path, required=True)
    p.add_argument("--bootstrap", required=True)
    p = commands.add_parser("properties", help="print the security part of server.properties")
    p.add_argument("--base", type=Path, required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--controller-port", type=int, required=True)
    p = commands.add_parser("format-args", help="print the --add-scram arguments, one a line")
    p.add_argument("--base", type=Path, required=True)
    args = parser.parse_args(argv)
    match args.command:
        case "prepare":
            prepare(args.base, args.bootstrap)
            tls, clients = tls_dir(args.base), clients_dir(args.base)
            print(f"security: certificates in {tls}, clients in {clients}")
        case "properties":
            sys.stdout.write(properties(args.base, args.port, args.controller_port))
        case "format-args":
            sys.stdout.write("".join(f"{arg}\n" for arg in format_args(args.base)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
