//! Standard Webhooks signatures (standardwebhooks.com): secrets `whsec_<base64>`, and
//! `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed with
//! the secret's decoded bytes.

use base64::{Engine, engine::general_purpose::STANDARD};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

const PREFIX: &str = "whsec_";

/// A new secret: 24 random bytes.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 24];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!("{PREFIX}{}", STANDARD.encode(bytes))
}

/// The `webhook-signature` header's value for one delivery.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<String, String> {
    let key = STANDARD
        .decode(secret.strip_prefix(PREFIX).unwrap_or(secret))
        .map_err(|_| "the subscription's secret is not base64".to_owned())?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|e| e.to_string())?;
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    Ok(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks specification's reference libraries.
    #[test]
    fn signs_as_the_reference_implementation() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = br#"{"test": 2432232314}"#;
        let signature =
            sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body).expect("signed");
        assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        assert!(new_secret().starts_with("whsec_"));
    }
}
