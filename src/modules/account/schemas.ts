import { Type } from 'typebox';
import { Closed, Label, Nullable, Text, Timestamp, Uuid } from '../../http/schemas.ts';

export const Security = Closed({
  mfa_enabled: Type.Boolean(),
  enrolled_at: Nullable(Timestamp),
  recovery_codes_remaining: Type.Integer({ description: 'Unused recovery codes.' }),
  trusted_devices: Type.Integer({ description: 'Trusted devices not yet expired.' }),
});

export const Enrollment = Closed({
  secret: Type.String({ description: 'The base32 TOTP secret (SHA-1, 6 digits, 30 s). Shown once.' }),
  otpauth_url: Type.String({ description: 'The same secret as an otpauth:// URI, for a QR code.' }),
});

export const RecoveryCodes = Closed({
  recovery_codes: Type.Array(Type.String(), { description: 'Ten single-use codes, shown once; each replaces the OTP one time.' }),
});

const Code = Text(32, { minLength: 6, description: 'The 6-digit code of the authenticator app, or one unused recovery code.' });

export const CodeBody = Closed({ otp: Code });
export const NoBody = Closed({});

export const TrustedDevice = Closed({
  id: Uuid,
  name: Type.String(),
  created_at: Timestamp,
  last_used_at: Nullable(Timestamp),
  expires_at: Timestamp,
});

export const NewTrustedDevice = Closed({ otp: Code, name: Label(100) });

export const TrustedDeviceWithToken = Closed({
  ...TrustedDevice.properties,
  token: Type.String({ description: 'The device\'s token, shown once: a sign-in that presents it may skip the second factor until expires_at.' }),
});
