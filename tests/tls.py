"""Certificates made at test time, for servers on 127.0.0.1 that speak https: a certificate
authority of the test's own (as a home server's owner makes one) and a server certificate it
signs, for the names and addresses asked. Made with the `cryptography` package when it is
installed (atproto brings it), else with the system's `openssl` command; a test that needs them
is skipped, saying why, when neither is there::

    authority = Authority.make(tmp_path)                     # ca.pem, to trust
    server = authority.issue("127.0.0.1", "localhost")       # a server-side ssl.SSLContext
    with MonitorServer(tls=server) as monitor: ...
"""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import List

import pytest

__all__ = ["Authority"]


@dataclass(frozen=True)
class Authority:
    """A certificate authority: `ca` is its certificate (PEM), the file a client trusts."""

    folder: Path
    ca: Path
    key: Path

    @classmethod
    def make(cls, folder: Path, name: str = "Twitterbot test CA") -> Authority:
        folder.mkdir(parents=True, exist_ok=True)
        ca, key = folder / "ca.pem", folder / "ca.key"
        if _has_cryptography():
            _ca_with_cryptography(ca, key, name)
        elif shutil.which("openssl"):
            _openssl(
                ["req", "-x509", "-new", "-nodes", *_EC, "-keyout", str(key), "-out", str(ca), "-days", "2"]
                + ["-subj", f"/CN={name}", "-addext", "basicConstraints=critical,CA:TRUE"]
                + ["-addext", "keyUsage=critical,keyCertSign,cRLSign"]
            )
        else:
            pytest.skip(
                "NO cryptography package OR openssl command to make a certificate: https is NOT tested here"
                " (pip install cryptography, or apt install openssl)"
            )
        return cls(folder, ca, key)

    def issue(self, *names: str) -> ssl.SSLContext:
        """A server-side context with a certificate this authority signed for `names` (host names
        and addresses)."""
        stem = self.folder / f"server-{len(list(self.folder.glob('server-*.pem')))}"
        cert, key = stem.with_suffix(".pem"), stem.with_suffix(".key")
        if _has_cryptography():
            _server_with_cryptography(self, cert, key, names)
        else:
            alt = ",".join(f"IP:{name}" if _is_address(name) else f"DNS:{name}" for name in names)
            request = stem.with_suffix(".csr")
            extensions = stem.with_suffix(".ext")
            extensions.write_text(
                f"subjectAltName={alt}\nbasicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\n"
            )
            _openssl(
                ["req", "-new", "-nodes", *_EC, "-keyout", str(key), "-out", str(request), "-subj", f"/CN={names[0]}"]
            )
            _openssl(
                ["x509", "-req", "-in", str(request), "-CA", str(self.ca), "-CAkey", str(self.key)]
                + ["-CAcreateserial", "-days", "2", "-extfile", str(extensions), "-out", str(cert)]
            )
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        return context


_EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]


def _openssl(arguments: List[str]) -> None:
    subprocess.run(["openssl", *arguments], check=True, capture_output=True, timeout=60)


def _has_cryptography() -> bool:
    try:
        import cryptography  # noqa: F401
    except ImportError:
        return False
    return True


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _ca_with_cryptography(ca: Path, key_file: Path, name: str) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )  # keyCertSign, cRLSign
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    ca.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )


def _server_with_cryptography(authority: Authority, cert: Path, key_file: Path, names: tuple) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    ca = x509.load_pem_x509_certificate(authority.ca.read_bytes())
    ca_key = serialization.load_pem_private_key(authority.key.read_bytes(), password=None)
    key = ec.generate_private_key(ec.SECP256R1())
    alt = [x509.IPAddress(ipaddress.ip_address(name)) if _is_address(name) else x509.DNSName(name) for name in names]
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.public_key()),  # type: ignore[arg-type]
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
    )
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
