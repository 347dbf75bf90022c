/** The shapes the client keeps, as the server sends them (only the fields it uses). */

export interface User {
  user_id: number;
  full_name: string;
  email: string;
  avatar_url: string | null;
  is_admin: boolean;
  is_bot: boolean;
  is_active?: boolean;
  role?: number;
}

export interface Sub {
  stream_id: number;
  name: string;
  color: string;
  description: string;
  is_muted: boolean;
  pin_to_top: boolean;
  invite_only: boolean;
}

export interface Reaction {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  user_id: number;
}

export interface Message {
  id: number;
  sender_id: number;
  sender_full_name: string;
  avatar_url: string | null;
  type: "stream" | "private";
  stream_id?: number;
  subject: string;
  display_recipient: string | { id: number; full_name: string; email: string }[];
  timestamp: number;
  content: string;
  last_edit_timestamp?: number;
  last_moved_timestamp?: number;
  reactions: Reaction[];
  flags: string[];
}

export interface RealmEmoji {
  id: string;
  name: string;
  source_url: string;
  deactivated: boolean;
}
